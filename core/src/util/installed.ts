import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import type { ModelSupport } from '../contracts/engine';

/**
 * A package that only some commands need (`@clawgym/model-hf` for reading ids with a Hugging Face
 * tokenizer), resolved as the project resolves it (from `fromDir`), else beside core itself.
 * When neither has it: an error naming what needs it and the line that installs it.
 */
export function requireInstalled<T>(name: string, fromDir: string, neededFor: string): T {
  for (const from of [join(fromDir, 'package.json'), __filename]) {
    let entry: string;
    try {
      entry = createRequire(from).resolve(name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') continue;
      throw err;
    }
    return require(entry) as T;
  }
  throw new ClawGymError(ErrorCodes.PLUGIN_NOT_FOUND, `${neededFor} needs the package ${name}, which is not installed here (looked from ${fromDir})`, {
    hint: `npm i -D ${name}`,
  });
}

/** `@clawgym/model-hf`, for a command that reads ids with a model folder's tokenizer and template. */
export const modelSupport = (fromDir: string, neededFor: string): ModelSupport => requireInstalled<ModelSupport>('@clawgym/model-hf', fromDir, neededFor);
