#!/usr/bin/env node
'use strict';
// Matmul throughput of the embedded model's compute kernels: a plain i-k-j loop (the reference,
// measured in the same run), the `cpu` kernels of @clawgym/kernels-cpu (default options, and with 1 and 2 threads),
// and the `gpujs` kernels. Run: npm run bench:kernels
const { join } = require('node:path');
const root = join(__dirname, '..', '..');
const { cpuKernels } = require(join(root, 'plugins', 'kernels-cpu', 'dist', 'index.js'));
const { gpujsKernels } = require(join(root, 'plugins', 'kernels-gpujs', 'dist', 'index.js'));

/** The plain loop every "how much faster" is relative to. */
function plainMatmul(a, b, c, m, k, n) {
  c.fill(0);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p], bo = p * n, co = i * n;
      for (let j = 0; j < n; j++) c[co + j] += x * b[bo + j];
    }
  }
}

/** Best-of-batches GFLOP/s (the machine is shared: the best batch is the least disturbed). */
function gflops(run, m, k, n) {
  const flops = 2 * m * k * n;
  run(); // warm-up: JIT, kernel compilation, worker start
  const perBatch = Math.max(1, Math.round(1e8 / flops)), batches = flops > 1e9 ? 2 : 5;
  let best = Infinity;
  for (let b = 0; b < batches; b++) {
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < perBatch; r++) run();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9 / perBatch);
  }
  return flops / best / 1e9;
}

function random(n) {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.random() * 2 - 1;
  return x;
}

async function main() {
  const impls = {
    plain: { matmul: plainMatmul },
    cpu: cpuKernels(),
    'cpu 1 thread': cpuKernels({ threads: 1 }),
    'cpu 2 threads': cpuKernels({ threads: 2 }),
    gpujs: gpujsKernels(),
  };
  const status = await impls.gpujs.check();
  console.log(`gpujs: ${status.ok ? `gpu.js backend ${status.backend}` : `unavailable: ${status.reason}`}`);
  const shapes = [[128, 128, 128], [256, 256, 256], [512, 128, 384], [1024, 1024, 1024]];
  const names = Object.keys(impls);
  console.log(`\nmatmul GFLOP/s (m×k×n)   ${names.map((s) => s.padStart(14)).join('')}`);
  const at256 = {};
  for (const [m, k, n] of shapes) {
    const a = random(m * k), b = random(k * n), c = new Float32Array(m * n);
    const row = [];
    for (const name of names) {
      if (name === 'gpujs' && !status.ok) { row.push(NaN); continue; }
      const kern = impls[name];
      row.push(gflops(() => kern.matmul(a, b, c, m, k, n), m, k, n));
    }
    if (m === 256) names.forEach((name, i) => (at256[name] = row[i]));
    console.log(`${`${m}×${k}×${n}`.padEnd(24)} ${row.map((g) => g.toFixed(2).padStart(14)).join('')}`);
  }
  for (const kern of Object.values(impls)) await kern.dispose?.();
  const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'nan');
  console.log(`RESULT kernels plain_gflops=${f(at256.plain)} cpu_gflops=${f(at256.cpu)} gpujs_gflops=${f(at256.gpujs)} cpu_speedup=${f(at256.cpu / at256.plain)}`);
}

main().catch((err) => { console.error(err); process.exit(1); });
