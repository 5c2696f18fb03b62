import type { ModelSupport } from '../contracts/engine';
import { ClawGymError, ErrorCodes } from '../errors';
import { tryResolve } from './resolve';

/**
 * A package that only some commands need (`@clawgym/model-hf` for reading ids with a Hugging Face
 * tokenizer), resolved as the project resolves it (from `fromDir`), else beside core itself.
 * When neither has it: an error naming what needs it and the line that installs it.
 */
export function requireInstalled<T>(name: string, fromDir: string, neededFor: string): T {
  const entry = tryResolve(name, fromDir) ?? tryResolve(name, __dirname);
  if (entry) return require(entry) as T;
  throw new ClawGymError(ErrorCodes.PLUGIN_NOT_FOUND, `${neededFor} needs the package ${name}, which is not installed here (looked from ${fromDir})`, {
    hint: `npm i -D ${name}`,
  });
}

/** `@clawgym/model-hf`, for a command that reads ids with a model folder's tokenizer and template. */
export const modelSupport = (fromDir: string, neededFor: string): ModelSupport => requireInstalled<ModelSupport>('@clawgym/model-hf', fromDir, neededFor);
