import { ClawGymError, datumTokenLoss, ErrorCodes, type AdamParams, type Datum, type DatumLoss, type DatumLossConfig, type DatumPassResult, type DatumTrainer, type LossReduction } from '@clawgym/core';
import { zerosLike, type ForwardResult, type Params } from './model';
import type { SharedPolicy } from './policy';

/**
 * The embedded model behind the Tinker operations: each datum is one causal sequence (position i
 * attends to 0..i and predicts `targetTokens[i]`); the losses are the Tinker API's per token
 * (SkyRL `skyrl/tinker/loss_fns.py`), reduced as `reduction` says (the backend the server
 * reproduces); gradients accumulate until `optimStep`.
 */
export class EmbeddedDatumTrainer implements DatumTrainer {
  /** Gradients accumulated by `forwardBackward` since the last `optimStep`. */
  pending: Params | undefined;
  reduction: LossReduction = 'sum';
  /** Datums accumulated since the last `optimStep` (`sequence_mean` divides the gradient by it, as SkyRL's JAX backend). */
  private accumulated = 0;
  /**
   * The passes of the last `forward`, by input tokens, at the weights they were read with: an RL
   * step scores its datums (`forward`, for π_old) and then trains the same datums at the same
   * weights (`forward_backward`), which then reuses them instead of computing them again.
   */
  private scored = new Map<string, { version: number; fwd: ForwardResult; logprobs: Float32Array }>();

  constructor(private readonly policy: SharedPolicy, private readonly applyAdam: (grads: Params, adam: AdamParams) => number) {}

  /** Forget kept passes (the weights were replaced). */
  clear(): void {
    this.scored.clear();
  }

  private run(datum: Datum, keep = false): { fwd: ForwardResult; logprobs: Float32Array; probs: Float32Array } {
    const key = `${datum.modelInput.join(',')}|${datum.targetTokens.join(',')}`;
    const hit = this.scored.get(key);
    if (hit && hit.version === this.policy.version) return { ...hit, probs: this.softmax(hit.fwd) };
    const n = datum.modelInput.length;
    if (datum.targetTokens.length !== n || datum.weights.length !== n) {
      throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `a datum has ${n} input tokens but ${datum.targetTokens.length} targets and ${datum.weights.length} weights`, { hint: 'target_tokens and weights need one entry per model_input token.' });
    }
    const parents = Int32Array.from({ length: n }, (_, i) => i - 1);
    const positions = Int32Array.from({ length: n }, (_, i) => i);
    const fwd = this.policy.model.forward(datum.modelInput, parents, positions);
    const V = this.policy.config.vocabSize;
    const logprobs = new Float32Array(n);
    const probs = new Float32Array(n * V);
    for (let t = 0; t < n; t++) {
      let max = -Infinity;
      for (let v = 0; v < V; v++) max = Math.max(max, fwd.logits[t * V + v]!);
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(fwd.logits[t * V + v]! - max);
      const lse = max + Math.log(sum);
      for (let v = 0; v < V; v++) probs[t * V + v] = Math.exp(fwd.logits[t * V + v]! - lse);
      logprobs[t] = fwd.logits[t * V + datum.targetTokens[t]!]! - lse;
    }
    if (keep) this.scored.set(key, { version: this.policy.version, fwd, logprobs });
    return { fwd, logprobs, probs };
  }

  private softmax(fwd: ForwardResult): Float32Array {
    const V = this.policy.config.vocabSize;
    const probs = new Float32Array(fwd.T * V);
    for (let t = 0; t < fwd.T; t++) {
      let max = -Infinity;
      for (let v = 0; v < V; v++) max = Math.max(max, fwd.logits[t * V + v]!);
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(fwd.logits[t * V + v]! - max);
      for (let v = 0; v < V; v++) probs[t * V + v] = Math.exp(fwd.logits[t * V + v]! - max) / sum;
    }
    return probs;
  }

  async forward(data: readonly Datum[]): Promise<DatumPassResult> {
    this.scored.clear();
    return { logprobs: data.map((d) => this.run(d, true).logprobs) };
  }

  async forwardBackward(data: readonly Datum[], loss: DatumLoss, config: DatumLossConfig = {}): Promise<DatumPassResult> {
    const V = this.policy.config.vocabSize;
    const grads = (this.pending ??= zerosLike(this.policy.model.params));
    const out: Float32Array[] = [];
    let total = 0;
    const weightOf = (d: Datum) => d.weights.reduce((a, w) => a + w, 0);
    const callWeight = data.reduce((a, d) => a + weightOf(d), 0);
    this.accumulated += data.length;
    for (const datum of data) {
      // sum: 1; token_mean: over the call's Σ weight; sequence_mean: over the datum's (the mean over datums at optimStep).
      const scale = this.reduction === 'sum' ? 1 : 1 / Math.max(this.reduction === 'token_mean' ? callWeight : weightOf(datum), 1e-9);
      const { fwd, logprobs, probs } = this.run(datum);
      out.push(logprobs);
      const n = logprobs.length;
      const dlogits = new Float32Array(n * V);
      for (let t = 0; t < n; t++) {
        const w = datum.weights[t]!;
        if (w === 0) continue;
        const { value, dlogp } = datumTokenLoss(loss, logprobs[t]!, datum.logprobs?.[t] ?? 0, datum.advantages?.[t] ?? 0, config);
        total += scale * w * value;
        const g = scale * w * dlogp;
        if (g === 0) continue;
        // d logp / d logits = onehot(target) − softmax
        for (let v = 0; v < V; v++) dlogits[t * V + v] = dlogits[t * V + v]! - g * probs[t * V + v]!;
        dlogits[t * V + datum.targetTokens[t]!] = dlogits[t * V + datum.targetTokens[t]!]! + g;
      }
      this.policy.model.backward(fwd, dlogits, grads);
    }
    return { logprobs: out, loss: total };
  }

  /** The accumulated gradient as `optimStep` applies it (`sequence_mean`: divided by the datums accumulated), and a fresh start. */
  takeGradients(): Params {
    const grads = this.pending ?? zerosLike(this.policy.model.params);
    if (this.reduction === 'sequence_mean' && this.accumulated > 1) {
      for (const g of grads.values()) for (let i = 0; i < g.length; i++) g[i] = g[i]! / this.accumulated;
    }
    this.pending = undefined;
    this.accumulated = 0;
    return grads;
  }

  async optimStep(adam: AdamParams): Promise<{ gradNorm: number }> {
    const grads = this.takeGradients();
    const gradNorm = this.applyAdam(grads, adam);
    this.policy.version++;
    this.scored.clear();
    return { gradNorm };
  }
}
