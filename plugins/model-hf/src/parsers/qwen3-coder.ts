import type { ToolSpec } from '@clawgym/core';
import { taggedCallParser } from './tagged-calls';
import type { ParserOptions, TextStreamParser } from './types';

/** A parameter's value as its schema types it: strings stay text, other types are read as JSON. */
function typedValue(raw: string, schema: Record<string, unknown> | undefined): unknown {
  const type = schema?.type;
  if (type === 'string' || (Array.isArray(type) && type.includes('string'))) return raw;
  if (raw === 'null') return null;
  try { return JSON.parse(raw); } catch { return raw; }
}

/**
 * Qwen3-Coder's XML calls, as its published format describes them:
 * `<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…</function>\n</tool_call>`.
 * Values are typed by the tool's JSON schema (the format itself writes everything as text).
 */
export function parseXmlCall(body: string, tools: readonly ToolSpec[] = []): { name: string; arguments: string } | undefined {
  const fn = /^\s*<function=([^>\n]+)>([\s\S]*?)<\/function>\s*$/.exec(body);
  if (!fn) return undefined;
  const name = fn[1]!.trim();
  const props = (tools.find((t) => t.name === name)?.parameters?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const args: Record<string, unknown> = {};
  const inner = fn[2]!;
  const re = /<parameter=([^>\n]+)>([\s\S]*?)<\/parameter>/g;
  let rest = inner;
  for (const m of inner.matchAll(re)) {
    const key = m[1]!.trim();
    // The format puts the value on its own lines: one newline each side is markup.
    const raw = m[2]!.replace(/^\n/, '').replace(/\n$/, '');
    args[key] = typedValue(raw, props[key]);
    rest = rest.replace(m[0], '');
  }
  if (rest.trim()) return undefined;
  return { name, arguments: JSON.stringify(args) };
}

/** Qwen3-Coder output: text, `<think>` reasoning, and XML tool calls inside `<tool_call>`. */
export function qwen3CoderParser(options: ParserOptions): TextStreamParser {
  return taggedCallParser((body, o) => parseXmlCall(body, o.tools), options);
}
