import type { OutputEvent } from '../../contracts/engine';
import { newToolCallId } from '../../engine/chatml';
import { parseToolCall } from '../../engine/chatml';
import { ReasoningText } from './reasoning-text';
import type { ParserOptions, TextStreamParser } from './types';

/**
 * Hermes / Qwen3 output: `<think>…</think>` reasoning, text, and
 * `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` calls (the format Qwen3's template
 * writes and vLLM's `hermes` tool parser reads). A call that is not valid JSON of that shape
 * goes back as the text the model wrote.
 */
export function hermesParser(options: ParserOptions): TextStreamParser {
  const rt = new ReasoningText(options.startInReasoning);
  let call: string | undefined;
  const drain = (final: boolean): OutputEvent[] => {
    const out: OutputEvent[] = [];
    for (;;) {
      if (call !== undefined) {
        const { text, marker } = rt.scanner.next(['</tool_call>'], final);
        call += text;
        if (!marker) return out;
        const parsed = parseToolCall(call);
        out.push(parsed ? { type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), ...parsed } } : { type: 'text', text: `<tool_call>${call}</tool_call>` });
        call = undefined;
        rt.switchTo('text');
        continue;
      }
      const markers = rt.mode === 'think' ? ['</think>'] : ['<think>', '<tool_call>'];
      const { text, marker } = rt.scanner.next(markers, final);
      out.push(...rt.emit(text));
      if (!marker) return out;
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
