import { newToolCallId, type OutputEvent } from '@clawgym/core';
import { MarkerScanner } from './scanner';
import { textEvent, type ParserOptions, type TextStreamParser } from './types';

const MESSAGE = '<|message|>';
const ENDS = ['<|end|>', '<|call|>', '<|return|>'];

/**
 * gpt-oss "harmony" output, from its published format: messages
 * `<|start|>assistant<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>json]<|message|>BODY<|end|>`
 * (the generation prompt already wrote the first `<|start|>assistant`; a call ends with
 * `<|call|>`, the final answer with `<|return|>`). `analysis` is reasoning, `final` the answer,
 * `commentary` to `functions.NAME` a tool call with a JSON body; other commentary is text.
 */
export function harmonyParser(_options: ParserOptions): TextStreamParser {
  const scanner = new MarkerScanner();
  let mode: 'header' | 'body' = 'header';
  let header = '';
  let body = '';
  let kind: 'thinking' | 'text' | 'call' = 'text';
  let recipient = '';
  const finishCall = (): OutputEvent[] => {
    const name = recipient.replace(/^functions\./, '');
    try {
      const v: unknown = JSON.parse(body);
      if (name && v && typeof v === 'object' && !Array.isArray(v)) return [{ type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), name, arguments: JSON.stringify(v) } }];
    } catch { /* not JSON: back as text below */ }
    return textEvent('text', body);
  };
  const drain = (final: boolean): OutputEvent[] => {
    const out: OutputEvent[] = [];
    for (;;) {
      if (mode === 'header') {
        const { text, marker } = scanner.next([MESSAGE], final);
        header += text;
        if (!marker) return out;
        const channel = /<\|channel\|>\s*(\w+)/.exec(header)?.[1] ?? '';
        recipient = /\bto=([^\s<]+)/.exec(header)?.[1] ?? '';
        kind = recipient.startsWith('functions.') ? 'call' : channel === 'analysis' ? 'thinking' : 'text';
        header = '';
        body = '';
        mode = 'body';
        continue;
      }
      const { text, marker } = scanner.next([...ENDS], final);
      if (kind === 'call') body += text; else out.push(...textEvent(kind, text));
      if (!marker) return out;
      if (kind === 'call') out.push(...finishCall());
      mode = 'header';
      // The next message opens with `<|start|>assistant`: header text, dropped once read.
    }
  };
  return {
    feed: (text) => { scanner.push(text); return drain(false); },
    end: () => {
      const out = drain(true);
      if (mode === 'body' && kind === 'call') out.push(...finishCall());
      // A header never closed by <|message|> is not a message: the model's text, kept as such.
      else if (mode === 'header' && header.replace(/<\|start\|>|assistant/g, '').trim()) out.push({ type: 'text', text: header });
      return out;
    },
  };
}
