import type { ComputeKernels } from '@clawgym/core';
import { Rng } from '@clawgym/core';

/** Shape of the embedded model. */
export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  layers: number;
  heads: number;
  /** Longest sequence (positions) the model reads; longer prompts are read from the tail. */
  context: number;
  /** Hidden width of the MLP (usually 4·dModel). */
  mlpHidden: number;
  /** Scalar value head on the final hidden state (for PPO). */
  valueHead: boolean;
  /**
   * The value loss trains the value head only, not the layers under it (default false). A small
   * model shares every weight with its policy: an untrained head's large early errors would
   * otherwise move the policy.
   */
  valueDetach?: boolean;
}

/** Parameter names and shapes, in a fixed order (the checkpoint's order). */
export function parameterShapes(c: ModelConfig): [string, number[]][] {
  const d = c.dModel;
  const shapes: [string, number[]][] = [['tok_emb', [c.vocabSize, d]], ['pos_emb', [c.context, d]]];
  for (let l = 0; l < c.layers; l++) {
    shapes.push(
      [`l${l}.ln1.g`, [d]], [`l${l}.ln1.b`, [d]],
      [`l${l}.wq`, [d, d]], [`l${l}.wk`, [d, d]], [`l${l}.wv`, [d, d]], [`l${l}.wo`, [d, d]], [`l${l}.bo`, [d]],
      [`l${l}.ln2.g`, [d]], [`l${l}.ln2.b`, [d]],
      [`l${l}.w1`, [d, c.mlpHidden]], [`l${l}.b1`, [c.mlpHidden]], [`l${l}.w2`, [c.mlpHidden, d]], [`l${l}.b2`, [d]],
    );
  }
  shapes.push(['lnf.g', [d]], ['lnf.b', [d]]);
  if (c.valueHead) shapes.push(['value.w', [d]], ['value.b', [1]]);
  return shapes;
}

export type Params = Map<string, Float32Array>;

/** Fresh weights: N(0, 0.02) matrices (residual projections scaled by 1/√(2·layers)), LN gains 1. */
export function initParams(c: ModelConfig, seed: number): Params {
  const rng = new Rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const params: Params = new Map();
  for (const [name, shape] of parameterShapes(c)) {
    const p = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('.g')) p.fill(1);
    else if (shape.length === 2 || name === 'value.w') {
      const std = /\.(wo|w2)$/.test(name) ? 0.02 / Math.sqrt(2 * c.layers) : 0.02;
      for (let i = 0; i < p.length; i++) p[i] = gauss() * std;
    }
    params.set(name, p);
  }
  return params;
}

/** Zeroed arrays shaped like the parameters (gradients, optimizer moments). */
export function zerosLike(params: Params): Params {
  return new Map([...params].map(([k, v]) => [k, new Float32Array(v.length)]));
}

/** `allowed[i·T + j] = 1` when token j is token i or one of its ancestors (tree attention). */
export function ancestorMask(parents: Int32Array): Uint8Array {
  const T = parents.length;
  const allowed = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i; j >= 0; j = parents[j]!) allowed[i * T + j] = 1;
  return allowed;
}

const GELU_C = Math.sqrt(2 / Math.PI);
const gelu = (x: number) => 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
const geluGrad = (x: number) => {
  const u = GELU_C * (x + 0.044715 * x * x * x);
  const t = Math.tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x);
};

/** What the forward pass keeps for the backward pass, per layer. */
interface LayerCache {
  x: Float32Array; h1: Float32Array; m1: Float32Array; r1: Float32Array;
  q: Float32Array; k: Float32Array; v: Float32Array; att: Float32Array; probs: Float32Array;
  x2: Float32Array; h2: Float32Array; m2: Float32Array; r2: Float32Array; u: Float32Array; g: Float32Array;
}

/** The result of a forward pass over one packed sequence. */
export interface ForwardResult {
  T: number;
  logits: Float32Array;
  /** V(s) at each position, when the model has a value head. */
  values?: Float32Array;
  cache: { tokens: Int32Array; positions: Int32Array; allowed: Uint8Array; layers: LayerCache[]; xf: Float32Array; hf: Float32Array; mf: Float32Array; rf: Float32Array };
}

/**
 * A decoder-only transformer (pre-norm, learned positions, GELU MLP, tied embeddings) over one
 * packed sequence: `parents` gives each token's previous token on its path, so a tree-packed
 * batch attends to ancestors only and a plain sequence is the chain parents[i] = i − 1.
 */
export class Transformer {
  /**
   * Array type of activations. Float32Array normally; Float64Array for gradient checks in
   * float64 (with float64 parameters and the reference kernels, which accept either).
   */
  F: Float32ArrayConstructor = Float32Array;

  constructor(readonly config: ModelConfig, public params: Params, readonly kernels: ComputeKernels) {}

  private p(name: string): Float32Array {
    return this.params.get(name)!;
  }

  forward(tokens: Int32Array, parents: Int32Array, positions: Int32Array): ForwardResult {
    const { dModel: d, heads, mlpHidden: H, vocabSize: V, layers } = this.config;
    const T = tokens.length;
    const K = this.kernels;
    const allowed = ancestorMask(parents);
    let x = new this.F(T * d);
    const emb = this.p('tok_emb');
    const pos = this.p('pos_emb');
    for (let t = 0; t < T; t++) {
      const tok = tokens[t]!;
      const ps = Math.min(positions[t]!, this.config.context - 1);
      for (let i = 0; i < d; i++) x[t * d + i] = emb[tok * d + i]! + pos[ps * d + i]!;
    }
    const caches: LayerCache[] = [];
    for (let l = 0; l < layers; l++) {
      const c = {} as LayerCache;
      c.x = x;
      c.h1 = new this.F(T * d); c.m1 = new this.F(T); c.r1 = new this.F(T);
      K.layerNorm(x, this.p(`l${l}.ln1.g`), this.p(`l${l}.ln1.b`), c.h1, c.m1, c.r1, T, d, 1e-5);
      c.q = new this.F(T * d); c.k = new this.F(T * d); c.v = new this.F(T * d);
      K.matmul(c.h1, this.p(`l${l}.wq`), c.q, T, d, d);
      K.matmul(c.h1, this.p(`l${l}.wk`), c.k, T, d, d);
      K.matmul(c.h1, this.p(`l${l}.wv`), c.v, T, d, d);
      c.att = new this.F(T * d); c.probs = new this.F(heads * T * T);
      K.attention(c.q, c.k, c.v, allowed, c.att, c.probs, T, heads, d / heads);
      const x2 = x.slice();
      K.matmul(c.att, this.p(`l${l}.wo`), x2, T, d, d, { accumulate: true });
      addBias(x2, this.p(`l${l}.bo`), T, d);
      c.x2 = x2;
      c.h2 = new this.F(T * d); c.m2 = new this.F(T); c.r2 = new this.F(T);
      K.layerNorm(x2, this.p(`l${l}.ln2.g`), this.p(`l${l}.ln2.b`), c.h2, c.m2, c.r2, T, d, 1e-5);
      c.u = new this.F(T * H);
      K.matmul(c.h2, this.p(`l${l}.w1`), c.u, T, d, H);
      addBias(c.u, this.p(`l${l}.b1`), T, H);
      c.g = c.u.map(gelu);
      const x3 = x2.slice();
      K.matmul(c.g, this.p(`l${l}.w2`), x3, T, H, d, { accumulate: true });
      addBias(x3, this.p(`l${l}.b2`), T, d);
      caches.push(c);
      x = x3;
    }
    const hf = new this.F(T * d); const mf = new this.F(T); const rf = new this.F(T);
    K.layerNorm(x, this.p('lnf.g'), this.p('lnf.b'), hf, mf, rf, T, d, 1e-5);
    const logits = new this.F(T * V);
    K.matmul(hf, emb, logits, T, d, V, { transB: true });
    let values: Float32Array | undefined;
    if (this.config.valueHead) {
      values = new this.F(T);
      const w = this.p('value.w');
      const b = this.p('value.b')[0]!;
      for (let t = 0; t < T; t++) { let s = b; for (let i = 0; i < d; i++) s += hf[t * d + i]! * w[i]!; values[t] = s; }
    }
    return { T, logits, values, cache: { tokens, positions, allowed, layers: caches, xf: x, hf, mf, rf } };
  }

  /** Gradients of the parameters (added into `grads`) given dLoss/dlogits (and dLoss/dvalues). */
  backward(fwd: ForwardResult, dlogits: Float32Array, grads: Params, dvalues?: Float32Array): void {
    const { dModel: d, heads, mlpHidden: H, vocabSize: V, layers } = this.config;
    const { T, cache } = fwd;
    const K = this.kernels;
    const g = (name: string) => grads.get(name)!;
    const emb = this.p('tok_emb');
    // Logits = hf · embᵀ: d(hf) = dlogits · emb, d(emb) += dlogitsᵀ · hf.
    const dhf = new this.F(T * d);
    K.matmul(dlogits, emb, dhf, T, V, d);
    K.matmul(dlogits, cache.hf, g('tok_emb'), V, T, d, { transA: true, accumulate: true });
    if (this.config.valueHead && dvalues) {
      const w = this.p('value.w');
      const dw = g('value.w');
      const db = g('value.b');
      for (let t = 0; t < T; t++) {
        const dv = dvalues[t]!;
        if (dv === 0) continue;
        db[0] = db[0]! + dv;
        for (let i = 0; i < d; i++) dw[i] = dw[i]! + dv * cache.hf[t * d + i]!;
        if (!this.config.valueDetach) for (let i = 0; i < d; i++) dhf[t * d + i] = dhf[t * d + i]! + dv * w[i]!;
      }
    }
    let dx = new this.F(T * d);
    K.layerNormBackward(dhf, cache.xf, this.p('lnf.g'), cache.mf, cache.rf, dx, g('lnf.g'), g('lnf.b'), T, d);
    for (let l = layers - 1; l >= 0; l--) {
      const c = cache.layers[l]!;
      // x3 = x2 + g·W2 + b2
      sumRowsInto(dx, g(`l${l}.b2`), T, d);
      K.matmul(c.g, dx, g(`l${l}.w2`), H, T, d, { transA: true, accumulate: true });
      const dg = new this.F(T * H);
      K.matmul(dx, this.p(`l${l}.w2`), dg, T, d, H, { transB: true });
      for (let i = 0; i < dg.length; i++) dg[i] = dg[i]! * geluGrad(c.u[i]!);
      sumRowsInto(dg, g(`l${l}.b1`), T, H);
      K.matmul(c.h2, dg, g(`l${l}.w1`), d, T, H, { transA: true, accumulate: true });
      const dh2 = new this.F(T * d);
      K.matmul(dg, this.p(`l${l}.w1`), dh2, T, H, d, { transB: true });
      const dx2 = new this.F(T * d);
      K.layerNormBackward(dh2, c.x2, this.p(`l${l}.ln2.g`), c.m2, c.r2, dx2, g(`l${l}.ln2.g`), g(`l${l}.ln2.b`), T, d);
      for (let i = 0; i < dx2.length; i++) dx2[i] = dx2[i]! + dx[i]!;
      // x2 = x + att·Wo + bo
      sumRowsInto(dx2, g(`l${l}.bo`), T, d);
      K.matmul(c.att, dx2, g(`l${l}.wo`), d, T, d, { transA: true, accumulate: true });
      const datt = new this.F(T * d);
      K.matmul(dx2, this.p(`l${l}.wo`), datt, T, d, d, { transB: true });
      const dq = new this.F(T * d); const dk = new this.F(T * d); const dv = new this.F(T * d);
      K.attentionBackward(datt, c.q, c.k, c.v, c.probs, dq, dk, dv, T, heads, d / heads);
      const dh1 = new this.F(T * d);
      for (const [w, dw] of [['wq', dq], ['wk', dk], ['wv', dv]] as const) {
        K.matmul(c.h1, dw, g(`l${l}.${w}`), d, T, d, { transA: true, accumulate: true });
        K.matmul(dw, this.p(`l${l}.${w}`), dh1, T, d, d, { transB: true, accumulate: true });
      }
      const dxl = new this.F(T * d);
      K.layerNormBackward(dh1, c.x, this.p(`l${l}.ln1.g`), c.m1, c.r1, dxl, g(`l${l}.ln1.g`), g(`l${l}.ln1.b`), T, d);
      for (let i = 0; i < dxl.length; i++) dxl[i] = dxl[i]! + dx2[i]!;
      dx = dxl;
    }
    const demb = g('tok_emb');
    const dpos = g('pos_emb');
    for (let t = 0; t < T; t++) {
      const tok = cache.tokens[t]!;
      const ps = Math.min(cache.positions[t]!, this.config.context - 1);
      for (let i = 0; i < d; i++) { demb[tok * d + i] = demb[tok * d + i]! + dx[t * d + i]!; dpos[ps * d + i] = dpos[ps * d + i]! + dx[t * d + i]!; }
    }
  }
}

function addBias(x: Float32Array, b: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) x[r * cols + c] = x[r * cols + c]! + b[c]!;
}

function sumRowsInto(dx: Float32Array, db: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) db[c] = db[c]! + dx[r * cols + c]!;
}
