import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatTemplate, Tokenizer } from '../contracts/engine';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { ClawGymError, ErrorCodes } from '../errors';
import { modelSupport } from '../kernel/installed';

/**
 * The tokenizer a run's ids are read with: `--tokenizer`, else the model folder its frozen
 * config (`<run>/config.json`) names in `engine.options.tokenizer`, else the byte-level pair
 * of the built-in engines.
 */
export function runTokenizer(runDir: string, flag: string | undefined, cwd: string): { tokenizer: Tokenizer; chatTemplate: ChatTemplate; from: string } {
  const load = (dir: string) => modelSupport(cwd, `reading a run's ids with the model folder ${dir}`).loadChatModel(dir);
  if (flag) return { ...load(resolve(cwd, flag)), from: resolve(cwd, flag) };
  const file = join(runDir, 'config.json');
  if (existsSync(file)) {
    let config: { rootDir?: unknown; engine?: { options?: { tokenizer?: unknown } } };
    try {
      config = JSON.parse(readFileSync(file, 'utf8')) as typeof config;
    } catch (err) {
      throw new ClawGymError(ErrorCodes.USAGE, `${file} is not JSON: ${(err as Error).message}`, { hint: 'Pass --tokenizer <model folder> to read the ids with it.', cause: err });
    }
    const folder = config.engine?.options?.tokenizer;
    if (typeof folder === 'string' && folder) {
      const dir = resolve(typeof config.rootDir === 'string' ? config.rootDir : runDir, folder);
      return { ...load(dir), from: dir };
    }
  }
  return { ...byteChatMl(), from: 'byte-level ChatML' };
}
