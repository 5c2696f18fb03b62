/**
 * Import rules of the repository, checked by `npm run deps` (dependency-cruiser) in CI.
 * Imports point down the pipeline: contracts and utilities at the bottom, then config, the
 * kernel, the stages (engine, tree, proxy, sandbox, tasks, kernels, train), the rollout runner,
 * evaluation and reports, the run's composition, and the CLI on top. Type-only imports count:
 * a cycle through types is still a cycle a reader has to untangle.
 */
const layer = (name, path, mayNotImport) => ({
  name: `${name}-points-down`,
  comment: `${name} sits below ${mayNotImport}: it must not import them`,
  severity: 'error',
  from: { path },
  to: { path: `^core/src/(${mayNotImport})(/|\\.ts$)` },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'import cycles hide which part depends on which', from: {}, to: { circular: true } },
    {
      name: 'kernel-knows-no-provider',
      severity: 'error',
      comment: 'the kernel holds the container, hooks and registry; concrete providers are registered by the composition root (builtins.ts, run/)',
      from: { path: '^core/src/kernel/' },
      to: { path: '^core/src/(sandbox|engine|kernels|proxy|rollout|tree|eval|report|run|cli|doctor|tasks|builtins)' },
    },
    layer('contracts', '^core/src/contracts/', 'config|kernel|engine|tree|proxy|sandbox|tasks|kernels|train|rollout|eval|report|run|doctor|cli|builtins|testing'),
    // The schema names the kernel's vocabulary (plugin objects, hook names); the kernel's
    // machinery (kernel, registry, resolution, tokens) reads the resolved config.
    layer('config', '^core/src/config/', 'kernel/(kernel|registry|create|resolve|discover|tokens)|engine|tree|proxy|sandbox|tasks|kernels|train|rollout|eval|report|run|doctor|cli|builtins|testing'),
    layer('kernel-vocabulary', '^core/src/kernel/(hooks|plugin|scoped-hooks|hook-errors)\\.ts$', 'config/(schema|load|define)|kernel/(kernel|registry|create|resolve|discover|tokens)'),
    layer('stages', '^core/src/(engine|tree|proxy|sandbox|tasks|kernels|train)/', 'rollout|eval|report|run|doctor|cli|builtins|testing'),
    layer('rollout', '^core/src/rollout/', 'eval|report|run|doctor|cli|builtins|testing'),
    layer('eval-and-report', '^core/src/(eval|report)/', 'run|doctor|cli|testing'),
    layer('run', '^core/src/run/', 'doctor|cli|testing'),
    layer('doctor', '^core/src/doctor/', 'cli|testing'),
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
