import { ClawGymError, ErrorCodes } from '@clawgym/core';
import { loadModelFolder, type ModelFolder } from './folder';
import { HfTokenizer } from './hf-tokenizer';
import { JinjaChatTemplate } from './jinja-template';

/** A model's tokenizer and template, ready for the proxy. */
export interface ChatModel {
  folder: ModelFolder;
  tokenizer: HfTokenizer;
  chatTemplate: JinjaChatTemplate;
  /** The model's context, from config.json, when the folder says. */
  contextLength?: number;
}

/** Options of {@link loadChatModel}. */
export interface ChatModelOptions {
  /** Folder the model path resolves from (the config file's). */
  rootDir?: string;
  /** Template variables such as `{ enable_thinking: false }`. */
  templateKwargs?: Record<string, unknown>;
  /** The clock of `strftime_now`. */
  now?: () => Date;
}

const SPECIAL_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token'];

/** The special-token strings of tokenizer_config.json (plain or `{content}` form), as HF passes them to templates. */
function specialTokens(config: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SPECIAL_KEYS) {
    const v = config[k];
    const s = typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string' ? (v as { content: string }).content : undefined;
    if (s !== undefined) out[k] = s;
  }
  return out;
}

/**
 * Load a Hugging Face model folder as the proxy uses it: `tokenizer.json` through
 * `@huggingface/tokenizers`, the chat template through `@huggingface/jinja`, stop ids from
 * `generation_config.json` / `config.json` and the tokenizer's eos token.
 */
export function loadChatModel(dir: string, options: ChatModelOptions = {}): ChatModel {
  const folder = loadModelFolder(dir, options.rootDir);
  if (!folder.chatTemplate) {
    throw new ClawGymError(ErrorCodes.MODEL_FOLDER, `model folder ${folder.dir} has no chat template`, {
      hint: 'put the template in chat_template.jinja or under "chat_template" in tokenizer_config.json',
    });
  }
  const tokenizer = new HfTokenizer(folder.tokenizerJson, folder.tokenizerConfig, folder.chatTemplate);
  const special = specialTokens(folder.tokenizerConfig);
  const eos = special.eos_token === undefined ? undefined : tokenizer.tokenId(special.eos_token);
  const stopIds = [...folder.eosIds, ...(eos === undefined ? [] : [eos])];
  if (stopIds.length === 0) {
    throw new ClawGymError(ErrorCodes.MODEL_FOLDER, `model folder ${folder.dir} names no end-of-generation token`, {
      hint: 'add generation_config.json with "eos_token_id", or "eos_token" in tokenizer_config.json',
    });
  }
  const chatTemplate = new JinjaChatTemplate({ tokenizer, source: folder.chatTemplate, stopIds, specialTokens: special, kwargs: options.templateKwargs, now: options.now });
  return { folder, tokenizer, chatTemplate, contextLength: folder.contextLength };
}
