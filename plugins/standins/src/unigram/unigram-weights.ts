import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '@clawgym/core';

/** `model_type` in the config.json of a unigram checkpoint. */
export const UNIGRAM_MODEL_TYPE = 'clawgym-unigram';
const LOGITS_FILE = 'logits.f32';

/**
 * The weights of the unigram policy (a context-free distribution over a real tokenizer's
 * vocabulary: one logit per token id), as a folder an engine in another process loads:
 * `config.json` (`model_type`, `vocab_size`) and the logits as little-endian float32.
 */
export async function saveUnigramWeights(dir: string, logits: Float32Array, extra: Record<string, Float32Array> = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.json'), `${JSON.stringify({ model_type: UNIGRAM_MODEL_TYPE, vocab_size: logits.length })}\n`);
  await writeFile(join(dir, LOGITS_FILE), Buffer.from(logits.buffer, logits.byteOffset, logits.byteLength));
  for (const [name, a] of Object.entries(extra)) await writeFile(join(dir, `${name}.f32`), Buffer.from(a.buffer, a.byteOffset, a.byteLength));
}

/** A float32 file of the folder, which must hold `length` numbers. */
async function readFloats(dir: string, name: string, length: number): Promise<Float32Array> {
  const buf = await readFile(join(dir, name));
  if (buf.byteLength !== length * 4) {
    throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `${join(dir, name)} holds ${buf.byteLength / 4} numbers, not the vocabulary's ${length}`, { hint: 'The checkpoint was written for another tokenizer: serve the engine and the trainer with the same --tokenizer.' });
  }
  const out = new Float32Array(length);
  out.set(new Float32Array(buf.buffer, buf.byteOffset, length));
  return out;
}

/** Load unigram logits (and the named extra arrays, when present) written for a vocabulary of `vocabSize`. */
export async function loadUnigramWeights(dir: string, vocabSize: number, extras: readonly string[] = []): Promise<{ logits: Float32Array; extra: Record<string, Float32Array> }> {
  const config = await readFile(join(dir, 'config.json'), 'utf8').then((t) => JSON.parse(t) as { model_type?: string; vocab_size?: number }).catch(() => undefined);
  if (!config || config.model_type !== UNIGRAM_MODEL_TYPE) {
    throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `${dir} is not a unigram checkpoint (config.json with model_type "${UNIGRAM_MODEL_TYPE}")`, { hint: 'Load weights the unigram trainer published (`clawgym trainer serve --tokenizer`).' });
  }
  if (config.vocab_size !== vocabSize) {
    throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `${dir} has a vocabulary of ${config.vocab_size} tokens, this model ${vocabSize}`, { hint: 'Serve the engine and the trainer with the same --tokenizer.' });
  }
  const extra: Record<string, Float32Array> = {};
  for (const name of extras) if (existsSync(join(dir, `${name}.f32`))) extra[name] = await readFloats(dir, `${name}.f32`, vocabSize);
  return { logits: await readFloats(dir, LOGITS_FILE, vocabSize), extra };
}

/** log Σ exp(logits), computed stably. */
export function logSumExp(logits: Float32Array): number {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  return max + Math.log(sum);
}
