import { textEvent, type TextStreamParser } from './types';

/** Families whose shipped template has no tool format (Llama 3.1's and Gemma 3's here): all text. */
export function plainParser(): TextStreamParser {
  return { feed: (text) => textEvent('text', text), end: () => [] };
}
