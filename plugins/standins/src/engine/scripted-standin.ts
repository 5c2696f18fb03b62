import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf, repliesByTurn, z, type ScriptedTurn } from '@clawgym/core';
import { loadChatModel } from '@clawgym/model-hf';
import { UnigramScriptedEngine } from '../unigram/unigram-engine';

const Turn = z.strictObject({
  text: z.string().optional(),
  thinking: z.string().optional(),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })).optional(),
});

/** What `engine serve --tokenizer` takes. */
export interface ScriptedStandinOptions { tokenizer: string; replies?: string; contextLength?: string }

/**
 * The engine `clawgym engine serve --tokenizer` serves instead of the config's: ClawGym's scripted
 * engine in that Hugging Face model's tokens and chat template (replies from `--replies`, turn N
 * of a conversation getting reply N), each reply token's logprob under the unigram policy that
 * `trainer serve --tokenizer` trains over the same vocabulary, standing for a model with
 * `--context-length` tokens of context (default 65,536).
 */
export function scriptedStandin(o: ScriptedStandinOptions, cwd: string): UnigramScriptedEngine {
  const contextLength = Number(o.contextLength ?? 65536);
  if (!Number.isInteger(contextLength) || contextLength <= 0) throw new ClawGymError(ErrorCodes.USAGE, `--context-length must be a positive number of tokens, not "${o.contextLength}"`);
  let replies: ScriptedTurn[] = [{ text: 'Hello from the ClawGym scripted engine.' }];
  if (o.replies !== undefined) {
    let raw: unknown;
    try { raw = JSON.parse(readFileSync(resolve(cwd, o.replies), 'utf8')); } catch (e) {
      throw new ClawGymError(ErrorCodes.USAGE, `--replies ${o.replies}: ${messageOf(e)}`, { hint: 'Give a JSON file holding an array of turns, e.g. [{"text": "Done."}].' });
    }
    const parsed = z.array(Turn).min(1).safeParse(raw);
    if (!parsed.success) throw new ClawGymError(ErrorCodes.USAGE, `--replies ${o.replies} is not an array of turns: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { hint: 'Each turn is {text?, thinking?, toolCalls?: [{name, arguments}]}.' });
    replies = parsed.data;
  }
  const model = loadChatModel(resolve(cwd, o.tokenizer));
  const engine = new UnigramScriptedEngine(repliesByTurn(replies), model);
  engine.contextLength = contextLength;
  return engine;
}
