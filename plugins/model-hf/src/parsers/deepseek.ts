import { newToolCallId, type OutputEvent } from '@clawgym/core';
import { ReasoningText } from './reasoning-text';
import type { ParserOptions, TextStreamParser } from './types';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

/** A JSON object's text, or undefined. */
function objectJson(raw: string): string | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? JSON.stringify(v) : undefined;
  } catch { return undefined; }
}

/**
 * One call's body. DeepSeek-V3's template writes `function<｜tool▁sep｜>NAME\n```json\nARGS\n```;
 * V3.1 writes `NAME<｜tool▁sep｜>ARGS`. Both are read.
 */
function parseCall(body: string): { name: string; arguments: string } | undefined {
  const sep = body.indexOf(SEP);
  if (sep < 0) return undefined;
  const head = body.slice(0, sep);
  const tail = body.slice(sep + SEP.length);
  const fenced = /^([^\n]+)\n```json\n([\s\S]*)\n```\s*$/.exec(tail);
  const name = fenced ? fenced[1]!.trim() : head.trim();
  const args = objectJson(fenced ? fenced[2]! : tail);
  return name && args !== undefined ? { name, arguments: args } : undefined;
}

/**
 * DeepSeek-V3 output: text (and `<think>` reasoning for the models that have it), then calls
 * between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`, each between
 * `<｜tool▁call▁begin｜>` and `<｜tool▁call▁end｜>`. Each call is emitted when it closes.
 */
export function deepseekParser(options: ParserOptions): TextStreamParser {
  const rt = new ReasoningText(options.startInReasoning);
  let mode: 'text' | 'calls' | 'call' = 'text';
  let body = '';
  let raw = '';
  const drain = (final: boolean): OutputEvent[] => {
    const out: OutputEvent[] = [];
    for (;;) {
      if (mode === 'text') {
        const markers = rt.mode === 'think' ? ['</think>'] : ['<think>', CALLS_BEGIN];
        const { text, marker } = rt.scanner.next(markers, final);
        out.push(...rt.emit(text));
        if (!marker) return out;
        out.push(...rt.close(marker === '</think>' ? Infinity : 0));
        if (marker === CALLS_BEGIN) { mode = 'calls'; raw = marker; } else rt.switchTo(marker === '<think>' ? 'think' : 'text');
        continue;
      }
      if (mode === 'calls') {
        const { text, marker } = rt.scanner.next([CALL_BEGIN, CALLS_END], final);
        raw += text;
        if (!marker) return out;
        raw += marker;
        if (marker === CALLS_END) { mode = 'text'; raw = ''; rt.switchTo('text'); } else { mode = 'call'; body = ''; }
        continue;
      }
      const { text, marker } = rt.scanner.next([CALL_END], final);
      body += text;
      if (!marker) return out;
      const call = parseCall(body);
      out.push(call ? { type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), ...call } } : { type: 'text', text: `${CALL_BEGIN}${body}${CALL_END}` });
      raw = '';
      mode = 'calls';
    }
  };
  return {
    feed: (text) => { rt.scanner.push(text); return drain(false); },
    end: () => {
      const out = drain(true);
      const left = mode === 'call' ? `${raw}${body}${rt.scanner.rest()}` : mode === 'calls' ? `${raw}${rt.scanner.rest()}` : '';
      if (left) out.push({ type: 'text', text: left });
      return [...out, ...rt.flush()];
    },
  };
}
