// The trainer service's side of the remote-path tests: the embedded model, trained by
// `clawgym trainer serve` (CLAWGYM_TEST_OUT: the test's folder).
const model = { dModel: 16, layers: 1, heads: 2, context: 2048, valueHead: false };
export default {
  engine: { use: 'embedded', options: { model, template: { kind: 'chatml' } } },
  trainer: 'embedded',
  run: { outDir: process.env.CLAWGYM_TEST_OUT ?? 'runs', seed: 3 },
};
