import { parseToolCall } from '@clawgym/core';
import { taggedCallParser } from './tagged-calls';
import type { ParserOptions, TextStreamParser } from './types';

/**
 * Hermes / Qwen3 output: `<think>…</think>` reasoning, text, and
 * `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` calls (the format Qwen3's template
 * writes and vLLM's `hermes` tool parser reads).
 */
export function hermesParser(options: ParserOptions): TextStreamParser {
  return taggedCallParser((body) => parseToolCall(body), options);
}
