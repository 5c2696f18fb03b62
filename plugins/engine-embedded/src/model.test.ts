import { referenceKernels, Rng } from '@clawgym/core';
import { initParams, Transformer, zerosLike, type ModelConfig, type Params } from './model';

const config: ModelConfig = { vocabSize: 19, dModel: 8, layers: 2, heads: 2, context: 16, mlpHidden: 12, valueHead: true };

/** The model in float64 with the reference kernels, for gradient checks. */
function model64(seed = 1): Transformer {
  const p32 = initParams(config, seed);
  const rng = new Rng(seed + 7);
  // Perturb gains and biases too, so no parameter sits at a special value.
  const params = new Map([...p32].map(([k, v]) => [k, Float64Array.from(v, (x) => x + (rng.next() - 0.5) * 0.1)])) as unknown as Params;
  const m = new Transformer(config, params, referenceKernels);
  m.F = Float64Array as unknown as Float32ArrayConstructor;
  return m;
}

/** L = Σ_i w_i · log p(token_i | ancestors) + Σ_i u_i · V(parent_i), and its gradients. */
function lossAndGrads(m: Transformer, tokens: Int32Array, parents: Int32Array, w: number[], u: number[], withGrads: boolean) {
  const positions = new Int32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) positions[i] = parents[i]! < 0 ? 0 : positions[parents[i]!]! + 1;
  const fwd = m.forward(tokens, parents, positions);
  const V = config.vocabSize;
  let loss = 0;
  const dlogits = new Float64Array(fwd.T * V) as unknown as Float32Array;
  const dvalues = new Float64Array(fwd.T) as unknown as Float32Array;
  for (let i = 0; i < tokens.length; i++) {
    const p = parents[i]!;
    if (p < 0) continue;
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, fwd.logits[p * V + v]!);
    let z = 0;
    for (let v = 0; v < V; v++) z += Math.exp(fwd.logits[p * V + v]! - max);
    const lse = max + Math.log(z);
    loss += w[i]! * (fwd.logits[p * V + tokens[i]!]! - lse) + u[i]! * fwd.values![p]!;
    for (let v = 0; v < V; v++) dlogits[p * V + v] = dlogits[p * V + v]! - w[i]! * Math.exp(fwd.logits[p * V + v]! - lse);
    dlogits[p * V + tokens[i]!] = dlogits[p * V + tokens[i]!]! + w[i]!;
    dvalues[p] = dvalues[p]! + u[i]!;
  }
  let grads: Params | undefined;
  if (withGrads) {
    grads = new Map([...m.params].map(([k, v]) => [k, new Float64Array(v.length)])) as unknown as Params;
    m.backward(fwd, dlogits, grads, dvalues);
  }
  return { loss, grads };
}

describe('embedded transformer', () => {
  // A tree: a shared prefix 0..4, then branch A (5..7) and branch B (8..10) off token 4.
  const parents = Int32Array.from([-1, 0, 1, 2, 3, 4, 5, 6, 4, 8, 9]);
  const tokens = Int32Array.from([1, 5, 3, 9, 2, 7, 7, 11, 4, 18, 0]);
  const rng = new Rng(3);
  const w = Array.from(tokens, () => rng.next() - 0.3);
  const u = Array.from(tokens, () => rng.next() - 0.5);

  it('with valueDetach, the value loss trains the value head alone: every other gradient is the policy loss\'s', () => {
    const m = model64();
    const detached = new Transformer({ ...config, valueDetach: true }, m.params, referenceKernels);
    detached.F = m.F;
    const withValue = lossAndGrads(detached, tokens, parents, w, u, true).grads!;
    const policyOnly = lossAndGrads(detached, tokens, parents, w, u.map(() => 0), true).grads!;
    const coupled = lossAndGrads(m, tokens, parents, w, u, true).grads!;
    for (const [name, g] of withValue) {
      if (name.startsWith('value.')) expect([...g]).toEqual([...coupled.get(name)!]);
      else expect([...g]).toEqual([...policyOnly.get(name)!]);
    }
    // Coupled (the default of the bare model), the value loss does reach the layers under it.
    expect([...coupled.get('l1.w2')!]).not.toEqual([...policyOnly.get('l1.w2')!]);
  });

  it('has the gradients of finite differences in float64, for every parameter tensor of every layer', () => {
    const m = model64();
    const { grads } = lossAndGrads(m, tokens, parents, w, u, true);
    const h = 1e-6;
    const pick = new Rng(11);
    for (const [name, p] of m.params) {
      for (let s = 0; s < 3; s++) {
        const i = Math.floor(pick.next() * p.length);
        const keep = p[i]!;
        p[i] = keep + h; const up = lossAndGrads(m, tokens, parents, w, u, false).loss;
        p[i] = keep - h; const down = lossAndGrads(m, tokens, parents, w, u, false).loss;
        p[i] = keep;
        const fd = (up - down) / (2 * h);
        const an = grads!.get(name)![i]!;
        // Embedding rows of tokens that never occur have zero gradient on both sides.
        expect(Math.abs(an - fd)).toBeLessThanOrEqual(1e-5 * Math.max(1e-3, Math.abs(fd)) + 1e-9);
      }
    }
  });

  it('tree attention: the packed tree equals its branches one by one, with the shared prefix counted once', () => {
    const m = model64(2);
    const packed = lossAndGrads(m, tokens, parents, w, u, true);
    // Branch A: tokens 0..7 as a chain; branch B: tokens 0..4 then 8..10, with 0..4 masked.
    const A = [0, 1, 2, 3, 4, 5, 6, 7];
    const B = [0, 1, 2, 3, 4, 8, 9, 10];
    const chain = (ids: number[]) => Int32Array.from(ids, (_, j) => j - 1);
    const a = lossAndGrads(m, Int32Array.from(A, (i) => tokens[i]!), chain(A), A.map((i) => w[i]!), A.map((i) => u[i]!), true);
    const b = lossAndGrads(m, Int32Array.from(B, (i) => tokens[i]!), chain(B), B.map((i, j) => (j < 5 ? 0 : w[i]!)), B.map((i, j) => (j < 5 ? 0 : u[i]!)), true);
    const rel = (x: number, y: number) => Math.abs(x - y) / Math.max(1e-12, Math.abs(x), Math.abs(y));
    expect(rel(packed.loss, a.loss + b.loss)).toBeLessThanOrEqual(1e-5);
    for (const [name, g] of packed.grads!) {
      const ga = a.grads!.get(name)!;
      const gb = b.grads!.get(name)!;
      let num = 0; let den = 0;
      for (let i = 0; i < g.length; i++) { num += (g[i]! - ga[i]! - gb[i]!) ** 2; den += g[i]! ** 2; }
      expect(Math.sqrt(num) / Math.max(1e-12, Math.sqrt(den))).toBeLessThanOrEqual(1e-5);
    }
  });

  it('masks what is not an ancestor: a branch never sees its sibling', () => {
    const m = model64(4);
    const positions = Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 5, 6, 7]);
    const full = m.forward(tokens, parents, positions);
    const changed = tokens.slice(); changed[6] = 13; // inside branch A
    const other = m.forward(changed, parents, positions);
    const V = config.vocabSize;
    // Branch B's logits (tokens 8..10) are untouched by a change in branch A.
    expect(Array.from(other.logits.slice(8 * V))).toEqual(Array.from(full.logits.slice(8 * V)));
    expect(Array.from(other.logits.slice(6 * V, 7 * V))).not.toEqual(Array.from(full.logits.slice(6 * V, 7 * V)));
  });

  it('starts from zeroed gradients shaped like the parameters', () => {
    const z = zerosLike(initParams(config, 0));
    expect([...z.values()].every((a) => a.every((x) => x === 0))).toBe(true);
  });
});
