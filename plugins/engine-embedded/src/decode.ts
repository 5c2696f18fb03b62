import { ClawGymError, ErrorCodes } from '@clawgym/core';
import type { Transformer } from './model';

/**
 * Incremental decoding with a key/value cache, for sampling: `prefill` runs the prompt through
 * the full forward pass and keeps each layer's keys and values; `step` appends one token and
 * returns its next-token logits, attending over the cache. Same arithmetic as the forward pass
 * on a causal chain, so sampled logprobs match the trainer's.
 */
export class KvDecoder {
  private readonly ks: Float32Array[];
  private readonly vs: Float32Array[];
  private length = 0;

  /** `capacity`: the most tokens this decoder will hold (default: the model's context). */
  constructor(private readonly model: Transformer, readonly capacity = model.config.context) {
    const { layers, context, dModel } = model.config;
    this.capacity = Math.min(capacity, context);
    this.ks = Array.from({ length: layers }, () => new Float32Array(this.capacity * dModel));
    this.vs = Array.from({ length: layers }, () => new Float32Array(this.capacity * dModel));
  }

  /** An independent copy (the cache up to the current position) with room for `capacity` tokens. */
  clone(capacity = this.capacity): KvDecoder {
    const c = new KvDecoder(this.model, Math.max(capacity, this.length));
    const n = this.length * this.model.config.dModel;
    this.ks.forEach((k, l) => c.ks[l]!.set(k.subarray(0, n)));
    this.vs.forEach((v, l) => c.vs[l]!.set(v.subarray(0, n)));
    c.length = this.length;
    return c;
  }

  get position(): number {
    return this.length;
  }

  /** Run the prompt; returns the logits after its last token. */
  prefill(tokens: Int32Array): Float32Array {
    const T = tokens.length;
    const parents = Int32Array.from({ length: T }, (_, i) => i - 1);
    const positions = Int32Array.from({ length: T }, (_, i) => i);
    const fwd = this.model.forward(tokens, parents, positions);
    const d = this.model.config.dModel;
    fwd.cache.layers.forEach((c, l) => { this.ks[l]!.set(c.k.subarray(0, T * d)); this.vs[l]!.set(c.v.subarray(0, T * d)); });
    this.length = T;
    const V = this.model.config.vocabSize;
    return fwd.logits.slice((T - 1) * V, T * V);
  }

  /** Feed one token; returns the logits predicting the next one. */
  step(token: number): Float32Array {
    const m = this.model;
    const { dModel: d, heads, mlpHidden: H, vocabSize: V, layers, context } = m.config;
    if (this.length >= Math.min(context, this.capacity)) throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `the decoder's cache is full (${Math.min(context, this.capacity)} positions): the engine caps output to the room left, so this is a bug`);
    const p = (n: string) => m.params.get(n)!;
    const K = m.kernels;
    const pos = this.length;
    let x = new Float32Array(d);
    const emb = p('tok_emb');
    const pe = p('pos_emb');
    for (let i = 0; i < d; i++) x[i] = emb[token * d + i]! + pe[pos * d + i]!;
    const one = new Float32Array(1);
    const one2 = new Float32Array(1);
    const hd = d / heads;
    for (let l = 0; l < layers; l++) {
      const h1 = new Float32Array(d);
      K.layerNorm(x, p(`l${l}.ln1.g`), p(`l${l}.ln1.b`), h1, one, one2, 1, d, 1e-5);
      const q = new Float32Array(d);
      const kRow = this.ks[l]!.subarray(pos * d, (pos + 1) * d);
      const vRow = this.vs[l]!.subarray(pos * d, (pos + 1) * d);
      K.matmul(h1, p(`l${l}.wq`), q, 1, d, d);
      K.matmul(h1, p(`l${l}.wk`), kRow, 1, d, d);
      K.matmul(h1, p(`l${l}.wv`), vRow, 1, d, d);
      const L = pos + 1;
      const att = new Float32Array(d);
      const scores = new Float32Array(L);
      const scale = 1 / Math.sqrt(hd);
      for (let h = 0; h < heads; h++) {
        let max = -Infinity;
        for (let j = 0; j < L; j++) {
          let s = 0;
          for (let i = 0; i < hd; i++) s += q[h * hd + i]! * this.ks[l]![j * d + h * hd + i]!;
          scores[j] = s * scale;
          if (scores[j]! > max) max = scores[j]!;
        }
        let sum = 0;
        for (let j = 0; j < L; j++) { scores[j] = Math.exp(scores[j]! - max); sum += scores[j]!; }
        for (let j = 0; j < L; j++) {
          const w = scores[j]! / sum;
          for (let i = 0; i < hd; i++) att[h * hd + i] = att[h * hd + i]! + w * this.vs[l]![j * d + h * hd + i]!;
        }
      }
      const x2 = x.slice();
      K.matmul(att, p(`l${l}.wo`), x2, 1, d, d, { accumulate: true });
      const bo = p(`l${l}.bo`);
      for (let i = 0; i < d; i++) x2[i] = x2[i]! + bo[i]!;
      const h2 = new Float32Array(d);
      K.layerNorm(x2, p(`l${l}.ln2.g`), p(`l${l}.ln2.b`), h2, one, one2, 1, d, 1e-5);
      const u = new Float32Array(H);
      K.matmul(h2, p(`l${l}.w1`), u, 1, d, H);
      const b1 = p(`l${l}.b1`);
      const C = Math.sqrt(2 / Math.PI);
      for (let i = 0; i < H; i++) { const z = u[i]! + b1[i]!; u[i] = 0.5 * z * (1 + Math.tanh(C * (z + 0.044715 * z * z * z))); }
      const x3 = x2.slice();
      K.matmul(u, p(`l${l}.w2`), x3, 1, H, d, { accumulate: true });
      const b2 = p(`l${l}.b2`);
      for (let i = 0; i < d; i++) x3[i] = x3[i]! + b2[i]!;
      x = x3;
    }
    const hf = new Float32Array(d);
    K.layerNorm(x, p('lnf.g'), p('lnf.b'), hf, one, one2, 1, d, 1e-5);
    const logits = new Float32Array(V);
    K.matmul(hf, emb, logits, 1, d, V, { transB: true });
    this.length++;
    return logits;
  }
}
