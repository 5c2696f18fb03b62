import type { ChatTemplate, Engine, GenerateRequest, GeneratedToken, PublishedWeights, Tokenizer } from '@clawgym/core';
import { ClawGymError, ErrorCodes, Rng } from '@clawgym/core';
import { KvDecoder } from './decode';
import type { SharedPolicy } from './policy';
import { loadPolicyWeights } from './weights';

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Log-softmax of `logits / temperature`, restricted to the top-p nucleus (others get −∞). */
export function samplingLogprobs(logits: Float32Array, temperature: number, topP: number): Float64Array {
  const n = logits.length;
  const t = Math.max(temperature, 1e-6);
  let max = -Infinity;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[i]! / t);
  const lp = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[i]! / t - max);
  const logZ = max + Math.log(sum);
  for (let i = 0; i < n; i++) lp[i] = logits[i]! / t - logZ;
  if (topP >= 1) return lp;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => lp[b]! - lp[a]!);
  let mass = 0;
  let keep = 0;
  while (keep < n && mass < topP) mass += Math.exp(lp[order[keep++]!]!);
  const logMass = Math.log(mass);
  const out = new Float64Array(n).fill(-Infinity);
  for (let r = 0; r < keep; r++) out[order[r]!] = lp[order[r]!]! - logMass;
  return out;
}

/**
 * The embedded engine: samples from the shared policy with a key/value cache, streaming each
 * token with the logprob of the distribution it was drawn from (temperature and top-p applied).
 * Seeded: the same seed, prompt and weights give the same tokens. A prompt is read whole and the
 * output cut to the room the context leaves; a prompt that fills the context is refused.
 */
export class EmbeddedEngine implements Engine {
  readonly name = 'embedded';
  /** Its logprobs are of the distribution each token was drawn from (temperature and top-p applied). */
  readonly logprobs = 'processed' as const;
  private calls = 0;
  /**
   * Prompts prefilled lately, with the policy version they were read with: the samples of a
   * group open with the same prompt, which is then prefilled once instead of once per sample.
   */
  private readonly prefilled = new Map<string, { version: number; decoder: KvDecoder; logits: Float32Array }>();

  constructor(
    private readonly policy: SharedPolicy,
    readonly tokenizer: Tokenizer,
    readonly chatTemplate: ChatTemplate,
    private readonly seed: number,
  ) {}

  get contextLength(): number {
    return this.policy.config.context;
  }

  policyVersion(): number {
    return this.policy.version;
  }

  /**
   * Load published weights unless this engine already serves that version: sharing the
   * trainer's weights in process it always does; served by `clawgym engine serve`, or sampling
   * for a trainer in another process (`clawgym trainer serve`), it loads the published folder.
   */
  async syncWeights(weights?: PublishedWeights): Promise<void> {
    if (!weights || weights.version === this.policy.version) return;
    if (/^[a-z]+:\/\//.test(weights.path)) {
      throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `the embedded engine loads published weights from a local folder, not ${weights.path}`, { hint: 'Set the tinker trainer\'s checkpointsDir to the folder `clawgym trainer serve --data` writes to, or use engine "tinker" to sample on the service.' });
    }
    await loadPolicyWeights(this.policy, weights);
  }

  async *generate(request: GenerateRequest): AsyncIterable<GeneratedToken> {
    const { context } = this.policy.config;
    // The trainer scores the whole prompt, so a prompt is never cut (that would make the sampled
    // logprobs disagree with the trainer's): one that leaves no room for output is refused, and
    // the output is cut to the room left.
    const prompt = request.promptIds;
    if (prompt.length >= context) throw new ClawGymError(ErrorCodes.PROMPT_TOO_LONG, `prompt is too long: ${prompt.length} tokens > ${context - 1} maximum (the model's context is ${context} tokens, output included)`, { hint: 'A larger model.context, or a harness and template that send less (template.systemChars, template.toolResultChars).' });
    const maxTokens = Math.min(Math.max(1, request.sampling.maxTokens), context - prompt.length);
    const rng = new Rng(request.sampling.seed ?? this.seed * 1_000_003 + this.calls++);
    const stops = new Set([...this.chatTemplate.stopIds, ...(request.sampling.stopIds ?? [])]);
    let { decoder, logits } = this.prefill(prompt, prompt.length + maxTokens);
    for (let i = 0; i < maxTokens; i++) {
      if (request.signal?.aborted) return;
      const lp = samplingLogprobs(logits, request.sampling.temperature, request.sampling.topP);
      let r = rng.next();
      let token = 0;
      for (let v = 0; v < lp.length; v++) {
        const p = Math.exp(lp[v]!);
        if (r < p) { token = v; break; }
        r -= p;
        token = v;
      }
      while (lp[token] === -Infinity && token > 0) token--; // guard against rounding at the tail
      yield { tokenId: token, logprob: lp[token]! };
      if (stops.has(token) || decoder.position >= context) return;
      await yieldToEventLoop();
      logits = decoder.step(token);
    }
  }

  /** A decoder positioned after `prompt` and the logits there; reuses a recent identical prompt. */
  private prefill(prompt: Int32Array, capacity: number): { decoder: KvDecoder; logits: Float32Array } {
    const key = prompt.join(',');
    const version = this.policy.version;
    const hit = this.prefilled.get(key);
    if (hit && hit.version === version) {
      this.prefilled.delete(key); // most recently used last
      this.prefilled.set(key, hit);
      return { decoder: hit.decoder.clone(capacity), logits: hit.logits };
    }
    const decoder = new KvDecoder(this.policy.model, capacity);
    const logits = decoder.prefill(Int32Array.from(prompt));
    for (const [k, v] of this.prefilled) if (v.version !== version) this.prefilled.delete(k); // older weights
    this.prefilled.set(key, { version, decoder: decoder.clone(prompt.length), logits });
    while (this.prefilled.size > PREFILL_CACHE) this.prefilled.delete(this.prefilled.keys().next().value!);
    return { decoder, logits };
  }
}

/** Prompts kept prefilled: a step's groups run side by side (16 × 2 × 384 × 64 floats × 4 B ≈ 6 MB at the default size). */
const PREFILL_CACHE = 16;
