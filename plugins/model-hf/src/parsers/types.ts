import type { OutputEvent, OutputStreamParser, ToolSpec } from '@clawgym/core';

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

/** A streaming decoder (see HfTokenizer.streamDecoder): complete text only, as ids arrive. */
export interface StreamDecoder { push(id: number): string; pushMany?(ids: readonly number[]): string; end(): string }

/**
 * Drive a text parser from token ids through a streaming decoder. Text parsers read their
 * input as a stream, so text fed in one piece gives the message that the same text fed in
 * pieces gives (parsers.test.ts checks it per family): `pushMany` decodes and feeds at once.
 */
export function idStreamParser(decoder: StreamDecoder, parser: TextStreamParser, skip: ReadonlySet<number>): OutputStreamParser {
  return {
    push: (id) => (skip.has(id) ? [] : parser.feed(decoder.push(id))),
    ...(decoder.pushMany ? { pushMany: (ids: readonly number[]) => parser.feed(decoder.pushMany!(skip.size ? ids.filter((id) => !skip.has(id)) : ids)) } : {}),
    end: () => [...parser.feed(decoder.end()), ...parser.end()],
  };
}

/** Events of one kind, dropping empty text. */
export const textEvent = (type: 'text' | 'thinking', text: string): OutputEvent[] => (text ? [{ type, text }] : []);
