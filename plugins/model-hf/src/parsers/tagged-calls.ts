import { newToolCallId, type OutputEvent } from '@clawgym/core';
import { ReasoningText } from './reasoning-text';
import type { ParserOptions, TextStreamParser } from './types';

/** Reads one call's body (what stands between `<tool_call>` and `</tool_call>`), or undefined if malformed. */
export type CallBodyParser = (body: string, options: ParserOptions) => { name: string; arguments: string } | undefined;

/** The markers a scan looks for in each state (made once, not per token). */
const CALL_END = ['</tool_call>'];
const THINK_END = ['</think>'];
const TEXT_MARKERS = ['<think>', '<tool_call>'];

/**
 * Output with `<think>` reasoning, text, and calls inside `<tool_call>…</tool_call>` (Hermes /
 * Qwen3 JSON, Qwen3-Coder XML): the formats differ only in the call's body. A call is emitted
 * when it closes; one whose body does not parse goes back as the text the model wrote.
 */
export function taggedCallParser(parseBody: CallBodyParser, options: ParserOptions): TextStreamParser {
  const rt = new ReasoningText(options.startInReasoning);
  let call: string | undefined;
  const drain = (final: boolean): OutputEvent[] => {
    const out: OutputEvent[] = [];
    for (;;) {
      if (call !== undefined) {
        const { text, marker } = rt.scanner.next(CALL_END, final);
        call += text;
        if (!marker) return out;
        const parsed = parseBody(call, options);
        out.push(parsed ? { type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), ...parsed } } : { type: 'text', text: `<tool_call>${call}</tool_call>` });
        call = undefined;
        rt.switchTo('text');
        continue;
      }
      const markers = rt.mode === 'think' ? THINK_END : TEXT_MARKERS;
      const { text, marker } = rt.scanner.next(markers, final);
      out.push(...rt.emit(text));
      if (!marker) return out;
      // Qwen3 writes `text\n<tool_call>`: one newline before a call is markup.
      if (marker === '<tool_call>') { out.push(...rt.close(1)); call = ''; }
      else if (marker === '<think>') { out.push(...rt.close(0)); rt.switchTo('think'); }
      else { out.push(...rt.close(Infinity)); rt.switchTo('text'); }
    }
  };
  return {
    feed: (text) => { rt.scanner.push(text); return drain(false); },
    end: () => {
      const out = drain(true);
      if (call !== undefined) { out.push({ type: 'text', text: `<tool_call>${call}${rt.scanner.rest()}` }); call = undefined; }
      return [...out, ...rt.flush()];
    },
  };
}
