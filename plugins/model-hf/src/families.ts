import { deepseekParser } from './parsers/deepseek';
import { harmonyParser } from './parsers/harmony';
import { hermesParser } from './parsers/hermes';
import { plainParser } from './parsers/plain';
import { qwen3CoderParser } from './parsers/qwen3-coder';
import type { TextParserFactory } from './parsers/types';

/** How one family of models writes its output, and what its template expects. */
export interface Family {
  name: 'hermes' | 'qwen3-coder' | 'deepseek-v3' | 'harmony' | 'llama3' | 'gemma' | 'plain';
  parser: TextParserFactory;
}

export const FAMILIES: Record<Family['name'], Family> = {
  hermes: { name: 'hermes', parser: hermesParser },
  'qwen3-coder': { name: 'qwen3-coder', parser: qwen3CoderParser },
  'deepseek-v3': { name: 'deepseek-v3', parser: deepseekParser },
  harmony: { name: 'harmony', parser: harmonyParser },
  llama3: { name: 'llama3', parser: () => plainParser() },
  gemma: { name: 'gemma', parser: () => plainParser() },
  plain: { name: 'plain', parser: () => plainParser() },
};

/** The family a template (and vocabulary) belongs to, read from the markup it writes. */
export function detectFamily(template: string, control: ReadonlyMap<string, number>): Family {
  if (template.includes('<function=') || template.includes('<parameter=')) return FAMILIES['qwen3-coder'];
  if (template.includes('<tool_call>')) return FAMILIES.hermes;
  if (template.includes('<｜tool▁calls▁begin｜>') || template.includes('<｜Assistant｜>')) return FAMILIES['deepseek-v3'];
  if (control.has('<|channel|>') && (template.includes('<|channel|>') || !template)) return FAMILIES.harmony;
  if (template.includes('<|start_header_id|>')) return FAMILIES.llama3;
  if (template.includes('<start_of_turn>')) return FAMILIES.gemma;
  return FAMILIES.plain;
}
