'use strict';
// bench:embedded — the embedded model's training and sampling throughput for two sizes
// (~0.2M and ~1M parameters, context 512), side by side with TensorFlow.js on its WebAssembly
// backend training the same shapes in the same run; and matmul GFLOP/s of each kernels plugin
// against a plain i-k-j loop.
const { performance } = require('node:perf_hooks');
const { byteChatMl } = require('../../core/dist/index.js');
const { cpuKernels } = require('../../plugins/kernels-cpu/dist/index.js');
const { SharedPolicy, EmbeddedTrainer, EmbeddedEngine } = require('../../plugins/engine-embedded/dist/index.js');
const { gpujsKernels } = require('../../plugins/kernels-gpujs/dist/index.js');

const { tokenizer, chatTemplate } = byteChatMl();
const V = tokenizer.vocabSize;
const CONTEXT = 512;
const B = 2; // sequences per step
const T = 512; // tokens per sequence (the whole context)
const SIZES = [
  { name: 'small', dModel: 64, layers: 2, heads: 4 },
  { name: 'large', dModel: 128, layers: 4, heads: 4 },
];
const opt = { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, gradClip: 1, warmupSteps: 0 };

/** A batch as trees: each a chain of T random tokens (one inserted first token, then T−1 trained). */
function batch(seed) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) >>> 0) % 256;
  return Array.from({ length: B }, (_, b) => {
    const tokens = Int32Array.from({ length: T }, rnd);
    return {
      rolloutId: `b${b}`, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1, auxiliaryRoots: [], filterCounts: {},
      nodes: [
        { id: 0, parent: -1, kind: 'inserted', tokens: tokens.subarray(0, 1), callIndex: 0 },
        { id: 1, parent: 0, kind: 'generated', tokens: tokens.subarray(1), logprobs: new Float32Array(T - 1), callIndex: 0 },
      ],
    };
  });
}

async function ours(size) {
  const config = { vocabSize: V, dModel: size.dModel, layers: size.layers, heads: size.heads, context: CONTEXT, mlpHidden: 4 * size.dModel, valueHead: false };
  const kernels = cpuKernels();
  const policy = new SharedPolicy(config, kernels, 1);
  const trainer = new EmbeddedTrainer(policy, opt);
  const trees = batch(7);
  await trainer.supervisedStep(trees); // warm-up (JIT, wasm memory)
  const steps = 3;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) await trainer.supervisedStep(trees);
  const trainTokPerS = (steps * B * T) / ((performance.now() - t0) / 1000);
  // Sampling with the KV cache: a short prompt, then up to 256 tokens.
  const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 3);
  const prompt = Int32Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [] }));
  let n = 0;
  const s0 = performance.now();
  for (let rep = 0; rep < 4; rep++) for await (const tok of engine.generate({ promptIds: prompt, sampling: { maxTokens: 256, temperature: 1, topP: 1, seed: rep, stopIds: [] } })) { void tok; n++; }
  const sampleTokPerS = n / ((performance.now() - s0) / 1000);
  await kernels.dispose?.();
  return { params: policy.size, trainTokPerS, sampleTokPerS };
}

async function tfjs(size, tf) {
  const d = size.dModel; const H = size.heads; const hd = d / H; const M = 4 * d;
  const v = (shape, std) => tf.variable(std ? tf.randomNormal(shape, 0, std) : tf.ones(shape));
  const z = (shape) => tf.variable(tf.zeros(shape));
  const p = { emb: v([V, d], 0.02), pos: v([CONTEXT, d], 0.02), lnfg: v([d]), lnfb: z([d]), layers: [] };
  for (let l = 0; l < size.layers; l++) p.layers.push({ g1: v([d]), b1n: z([d]), wq: v([d, d], 0.02), wk: v([d, d], 0.02), wv: v([d, d], 0.02), wo: v([d, d], 0.02), bo: z([d]), g2: v([d]), b2n: z([d]), w1: v([d, M], 0.02), b1: z([M]), w2: v([M, d], 0.02), b2: z([d]) });
  const ln = (x, g, b) => { const { mean, variance } = tf.moments(x, -1, true); return x.sub(mean).div(variance.add(1e-5).sqrt()).mul(g).add(b); };
  const gelu = (x) => x.mul(0.5).mul(tf.tanh(x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
  const mask = tf.linalg.bandPart(tf.ones([T, T]), -1, 0).sub(1).mul(1e9); // 0 on and below the diagonal, −1e9 above
  const heads = (x) => x.reshape([B, T, H, hd]).transpose([0, 2, 1, 3]);
  const tokens = batch(7).map((t) => Array.from(t.nodes[0].tokens).concat(Array.from(t.nodes[1].tokens)));
  const inputs = tf.oneHot(tf.tensor2d(tokens.map((s) => s.slice(0, T - 1).concat([0])), [B, T], 'int32').reshape([B * T]), V).toFloat();
  const labels = tf.oneHot(tf.tensor2d(tokens.map((s) => s.slice(1).concat([0])), [B, T], 'int32').reshape([B * T]), V).toFloat();
  const optimizer = tf.train.adam(1e-3, 0.9, 0.99, 1e-8);
  const loss = () => {
    // One-hot embedding: tf.gather has no gradient on this backend (MACHINE-NOTES).
    let x = inputs.matMul(p.emb).reshape([B, T, d]).add(p.pos.slice([0, 0], [T, d]));
    for (const L of p.layers) {
      const h = ln(x, L.g1, L.b1n).reshape([B * T, d]);
      const q = heads(h.matMul(L.wq)); const k = heads(h.matMul(L.wk)); const vv = heads(h.matMul(L.wv));
      const att = tf.softmax(q.matMul(k, false, true).mul(1 / Math.sqrt(hd)).add(mask));
      const o = att.matMul(vv).transpose([0, 2, 1, 3]).reshape([B * T, d]);
      x = x.add(o.matMul(L.wo).add(L.bo).reshape([B, T, d]));
      const h2 = ln(x, L.g2, L.b2n).reshape([B * T, d]);
      x = x.add(gelu(h2.matMul(L.w1).add(L.b1)).matMul(L.w2).add(L.b2).reshape([B, T, d]));
    }
    const logits = ln(x, p.lnfg, p.lnfb).reshape([B * T, d]).matMul(p.emb, false, true);
    return tf.losses.softmaxCrossEntropy(labels, logits);
  };
  optimizer.minimize(loss); // warm-up
  const steps = 2;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) tf.tidy(() => { optimizer.minimize(loss); });
  return (steps * B * T) / ((performance.now() - t0) / 1000);
}

function gflops(mm, n) {
  const a = Float32Array.from({ length: n * n }, Math.random); const b = Float32Array.from({ length: n * n }, Math.random); const c = new Float32Array(n * n);
  mm(a, b, c); // warm-up
  const reps = 3;
  const t0 = performance.now();
  for (let r = 0; r < reps; r++) mm(a, b, c);
  return (reps * 2 * n ** 3) / ((performance.now() - t0) / 1000) / 1e9;
}

async function main() {
  const tf = require('@tensorflow/tfjs');
  require('@tensorflow/tfjs-backend-wasm');
  await tf.setBackend('wasm');
  await tf.ready();
  const rows = [];
  for (const size of SIZES) {
    const o = await ours(size);
    const t = await tfjs(size, tf);
    rows.push({ size: size.name, ...o, tfjsTokPerS: t });
    console.log(`${size.name.padEnd(6)} ${(o.params / 1e6).toFixed(2)}M params, context ${CONTEXT}: train ${o.trainTokPerS.toFixed(0)} tok/s (tfjs wasm ${t.toFixed(0)} tok/s, ${(o.trainTokPerS / t).toFixed(2)}x), sample ${o.sampleTokPerS.toFixed(0)} tok/s`);
  }
  const n = 256;
  const plain = gflops((a, b, c) => { c.fill(0); for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) { const av = a[i * n + k]; for (let j = 0; j < n; j++) c[i * n + j] += av * b[k * n + j]; } }, n);
  const cpu = cpuKernels();
  const gpu = gpujsKernels();
  const cpuG = gflops((a, b, c) => cpu.matmul(a, b, c, n, n, n), n);
  const gpuG = gflops((a, b, c) => gpu.matmul(a, b, c, n, n, n), n);
  await cpu.dispose?.();
  console.log(`matmul ${n}^3: plain i-k-j ${plain.toFixed(2)} GFLOP/s, cpu ${cpuG.toFixed(1)}, gpujs ${gpuG.toFixed(2)}`);
  const [s, l] = rows;
  console.log(`RESULT embedded train_tok_per_s=${s.trainTokPerS.toFixed(0)} tfjs_tok_per_s=${s.tfjsTokPerS.toFixed(0)} train_speedup_vs_tfjs=${(s.trainTokPerS / s.tfjsTokPerS).toFixed(2)} sample_tok_per_s=${s.sampleTokPerS.toFixed(0)} large_train_tok_per_s=${l.trainTokPerS.toFixed(0)} large_tfjs_tok_per_s=${l.tfjsTokPerS.toFixed(0)} large_train_speedup_vs_tfjs=${(l.trainTokPerS / l.tfjsTokPerS).toFixed(2)} large_sample_tok_per_s=${l.sampleTokPerS.toFixed(0)} matmul_gflops=${cpuG.toFixed(1)} gpujs_matmul_gflops=${gpuG.toFixed(2)} plain_matmul_gflops=${plain.toFixed(2)}`);
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
