import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf } from '@clawgym/core';

/** What a Hugging Face model folder holds that the proxy needs: tokenizer, template, stops, context. */
export interface ModelFolder {
  /** Absolute path of the folder. */
  dir: string;
  /** Parsed `tokenizer.json`. */
  tokenizerJson: Record<string, unknown>;
  /** Parsed `tokenizer_config.json` (empty when absent). */
  tokenizerConfig: Record<string, unknown>;
  /** The Jinja chat template: `chat_template.jinja`, else `tokenizer_config.json`'s `chat_template`. */
  chatTemplate?: string;
  /** Where the template came from, for messages. */
  templateSource?: string;
  /** End-of-generation ids: `generation_config.json` and `config.json` `eos_token_id`, and the tokenizer's eos token. */
  eosIds: number[];
  /** `config.json`'s `max_position_embeddings`, when present. */
  contextLength?: number;
}

const HINT = 'pass `tokenizer: "<folder>"` with the Hugging Face files of the served model ' +
  '(tokenizer.json, tokenizer_config.json, and chat_template.jinja when the template is not in tokenizer_config.json), ' +
  'e.g. the folder `huggingface-cli download <model> --include "*.json" "*.jinja"` writes';

function readJson(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ClawGymError(ErrorCodes.MODEL_FOLDER, `${path} is not valid JSON: ${messageOf(err)}`, { cause: err, hint: HINT });
  }
}

const ids = (v: unknown): number[] => (Array.isArray(v) ? v.filter(Number.isInteger) : Number.isInteger(v) ? [v as number] : []);

/** The template text of `tokenizer_config.json`'s `chat_template` (a string, or named templates: `default` first). */
function configTemplate(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return undefined;
  const named = v as { name?: string; template?: string }[];
  return (named.find((t) => t.name === 'default') ?? named[0])?.template;
}

/**
 * Read a model folder. Only the small JSON and Jinja files are read; weights are never needed.
 * Fails with a coded error that says what the folder must hold.
 */
export function loadModelFolder(dir: string, rootDir = process.cwd()): ModelFolder {
  const abs = resolve(rootDir, dir);
  if (!existsSync(abs)) throw new ClawGymError(ErrorCodes.MODEL_FOLDER, `model folder ${abs} does not exist`, { hint: HINT });
  const tokenizerJson = readJson(join(abs, 'tokenizer.json'));
  if (!tokenizerJson) throw new ClawGymError(ErrorCodes.MODEL_FOLDER, `model folder ${abs} has no tokenizer.json`, { hint: HINT });
  const tokenizerConfig = readJson(join(abs, 'tokenizer_config.json')) ?? {};
  const jinjaPath = join(abs, 'chat_template.jinja');
  let chatTemplate: string | undefined;
  let templateSource: string | undefined;
  if (existsSync(jinjaPath)) { chatTemplate = readFileSync(jinjaPath, 'utf8'); templateSource = jinjaPath; }
  else {
    chatTemplate = configTemplate(tokenizerConfig.chat_template) ?? (readJson(join(abs, 'chat_template.json'))?.chat_template as string | undefined);
    if (chatTemplate) templateSource = join(abs, 'tokenizer_config.json');
  }
  const generation = readJson(join(abs, 'generation_config.json')) ?? {};
  const config = readJson(join(abs, 'config.json')) ?? {};
  const eosIds = [...new Set([...ids(generation.eos_token_id), ...ids(config.eos_token_id)])];
  const max = config.max_position_embeddings;
  return {
    dir: abs, tokenizerJson, tokenizerConfig, chatTemplate, templateSource, eosIds,
    contextLength: Number.isInteger(max) && (max as number) > 0 ? (max as number) : undefined,
  };
}
