import type { OutputEvent, OutputStreamParser } from '../../contracts/engine';
import type { ToolSpec } from '../../contracts/messages';

/** A parser of one model family's output, fed decoded text as it streams. */
export interface TextStreamParser {
  feed(text: string): OutputEvent[];
  /** Generation ended: flush what is held (an unclosed call goes back as text). */
  end(): OutputEvent[];
}

/** Options every family parser takes. */
export interface ParserOptions {
  /** The request's tools (the XML format needs their schemas to type parameter values). */
  tools?: readonly ToolSpec[];
  /** The generation prompt already opened a reasoning block (it ends with `<think>`). */
  startInReasoning?: boolean;
}

export type TextParserFactory = (options: ParserOptions) => TextStreamParser;

/** Drive a text parser from token ids through a streaming decoder. */
export function idStreamParser(decoder: { push(id: number): string; end(): string }, parser: TextStreamParser, skip: ReadonlySet<number>): OutputStreamParser {
  return {
    push: (id) => (skip.has(id) ? [] : parser.feed(decoder.push(id))),
    end: () => [...parser.feed(decoder.end()), ...parser.end()],
  };
}

/** Events of one kind, dropping empty text. */
export const textEvent = (type: 'text' | 'thinking', text: string): OutputEvent[] => (text ? [{ type, text }] : []);
