import { definePlugin, parseWithSchema, z, type TaskSuite } from '@clawgym/core';
import { builtinTask, DEFAULT_FAMILIES, FAMILY_NAMES } from './families';

export { builtinTask, DEFAULT_FAMILIES, FAMILIES, FAMILY_NAMES, WORDS, type Split } from './families';

/** Options of the `builtin` suite: `tasks: [{ use: 'builtin', options: { families: ['write'] } }]`. */
export const BuiltinOptions = z.strictObject({
  /** Which families to draw from (default: the open-vocabulary ones, `DEFAULT_FAMILIES`). */
  families: z.array(z.enum(FAMILY_NAMES)).optional(),
});

/** Train and test use disjoint seeds, so no test task is ever trained on. */
const SPLIT_SEED = { train: 1, test: 1_000_003 } as const;

/** The built-in suite: generated file and shell tasks of graded difficulty, each with an oracle. */
export function builtinSuite(raw: unknown = {}): TaskSuite {
  const base = parseWithSchema(BuiltinOptions, raw, 'options of task suite "builtin"');
  return {
    name: 'builtin',
    async tasks(split, { seed, limit = 60, options: slot }) {
      // The config slot's options win over the plugin's.
      const options = slot && Object.keys(slot).length ? parseWithSchema(BuiltinOptions, slot, 'options of task suite "builtin"') : base;
      const families = (options.families ?? base.families ?? [...DEFAULT_FAMILIES]).map((f) => FAMILY_NAMES.indexOf(f));
      return Array.from({ length: limit }, (_, i) => builtinTask(SPLIT_SEED[split] + seed, i, families, split));
    },
  };
}

/** `@clawgym/task-builtin`: provides the `builtin` task suite (the default training set). */
export default definePlugin({
  name: 'clawgym:task-builtin',
  core: '^0.1.0',
  options: BuiltinOptions,
  apply(api, options) {
    api.provide.taskSuite(builtinSuite(options));
  },
});
