/**
 * Import rules of the repository, checked by `npm run deps` (dependency-cruiser) in CI.
 * core/src is a stack of layers, each importing only the layers below it: the contracts (every
 * interface, the hook map and the plugin contract), utilities and errors, config, the kernel,
 * the pipeline's stages, the rollout runner, evaluation and reports, core's built-in plugins,
 * the run's composition, the doctor, the CLI, and the test kit on top. No exceptions: what two
 * layers share lives in the lower one. Type-only imports count: a cycle through types is still a
 * cycle a reader has to untangle.
 */
const LAYERS = [
  ['contracts', 'contracts/'],
  ['foundation', 'util/', 'errors.ts', 'version.ts'],
  ['config', 'config/'],
  // The kernel holds the container, hooks and registry; concrete providers are registered by the
  // composition root (builtins.ts, run/), so it knows none of the stages.
  ['kernel', 'kernel/'],
  // The RL step's stages, numbered in the order a rollout meets them (the folders list in that order).
  ['stages', '1-tasks/', '2-sandbox/', '3-harness/', '4-proxy/', '7-tree/', '8-advantage/', '9-train/'],
  // The records a rollout's calls leave (their store is a service of the run's container) and
  // one rollout: a sandbox, the harness, the proxy and the verifier put together.
  ['rollout', '5-records/', '6-rollout/'],
  ['eval-and-report', 'eval/', 'report/'],
  ['builtins', 'builtins.ts'],
  ['run', 'run/'],
  ['doctor', 'doctor/'],
  // Packages of one's own (`clawgym new plugin`): the sources and tests a new plugin starts from.
  ['scaffold', 'scaffold/'],
  ['cli', 'cli/'],
  // Builds kernels with core's built-ins as a run does; only tests import it.
  ['testing', 'testing/'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathsOf = (entries) => `^core/src/(${entries.map(escape).join('|')})`;

const layerRules = LAYERS.map(([name, ...entries], i) => ({
  name: `${name}-points-down`,
  comment: `${name} sits below ${LAYERS.slice(i + 1).map(([n]) => n).join(', ') || 'nothing'}: it must not import them`,
  severity: 'error',
  from: { path: pathsOf(entries) },
  to: { path: pathsOf(LAYERS.slice(i + 1).flatMap(([, ...e]) => e)) },
})).filter((_, i) => i < LAYERS.length - 1);

// Within the stages layer, a stage may use the stages a rollout meets before it, never one after:
// the proxy (4) knows nothing of training (9). What two stages share lives in the earlier one or
// below the layer; what only a stand-in needs (the unigram trainer) lives in @clawgym/standins.
const STAGES = LAYERS.find(([name]) => name === 'stages').slice(1);
const stageRules = STAGES.slice(0, -1).map((stage, i) => ({
  name: `stage-${stage.slice(0, -1)}-points-back`,
  comment: `${stage} comes before ${STAGES.slice(i + 1).join(', ')} in a rollout: it must not import them`,
  severity: 'error',
  from: { path: pathsOf([stage]) },
  to: { path: pathsOf(STAGES.slice(i + 1)) },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'import cycles hide which part depends on which', from: {}, to: { circular: true } },
    ...layerRules,
    ...stageRules,
    {
      name: 'every-file-in-a-layer',
      severity: 'error',
      comment: 'a new folder of core/src takes its place in LAYERS, so the rules cover it',
      from: { path: '^core/src/', pathNot: `${pathsOf(LAYERS.flatMap(([, ...e]) => e))}|^core/src/index\\.ts$` },
      to: {},
    },
    {
      name: 'plugins-use-the-public-api',
      severity: 'error',
      comment: 'plugins import @clawgym/core (and @clawgym/core/testing in tests), never its files',
      from: { path: '^plugins/' },
      to: { path: '^core/src/', pathNot: '^core/src/(index|testing/index)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(\\.test\\.ts$|__fixtures__|/dist/)' },
    tsPreCompilationDeps: true,
    // TypeScript 7 has no JavaScript compiler API; swc parses the sources (type imports included).
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
