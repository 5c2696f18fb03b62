import type { ResolvedConfig } from '../config/schema';
import { promptLengthOf, type CallSummary } from '../contracts/records';
import type { RolloutReport } from './runner';

/** What one rollout used: its sandbox's wall and CPU time, the harness's time, the engine's time and tokens. */
export interface RolloutCost {
  /** Seconds from the sandbox's creation to the end of verification (the final attempt). */
  sandboxSeconds: number;
  /** CPU seconds of the sandbox's processes, where its provider measures them (cgroups). */
  cpuSeconds?: number;
  /** Seconds the harness ran. */
  harnessSeconds: number;
  /** Seconds the engine spent on the rollout's calls (each call's receipt to its last token, summed). */
  engineSeconds: number;
  /** Prompt tokens the engine prefilled: the calls' prompts less what each reused from its parent. */
  promptNew: number;
  /** Prompt tokens reused from the prefix (TITO: the parent call's prompt and output, or a retry's whole prompt). */
  promptReused: number;
  generated: number;
}

/** The prompt tokens of a call that were reused, not rendered and prefilled anew. */
export function reusedTokensOf(c: CallSummary): number {
  if (c.origin.kind === 'reuse') return Math.min(c.origin.reusedTokens, promptLengthOf(c));
  if (c.origin.kind === 'retry') return promptLengthOf(c);
  return 0;
}

/** A rollout's cost, from its report (final attempt). */
export function rolloutCost(r: RolloutReport): RolloutCost {
  let prompt = 0; let reused = 0; let generated = 0; let engineMs = 0;
  for (const c of r.records) {
    prompt += promptLengthOf(c);
    reused += reusedTokensOf(c);
    generated += c.outputIds.length;
    engineMs += Math.max(0, c.timings.finishedAt - c.timings.receivedAt);
  }
  const p = r.phases ?? {};
  const sandboxMs = (p.sandboxMs ?? 0) + (p.setupMs ?? 0) + (p.harnessMs ?? 0) + (p.recordsMs ?? 0) + (p.verifyMs ?? 0);
  return {
    sandboxSeconds: (sandboxMs || r.durationMs) / 1000,
    ...(r.usage?.cpuSeconds !== undefined ? { cpuSeconds: r.usage.cpuSeconds } : {}),
    harnessSeconds: (p.harnessMs ?? 0) / 1000, engineSeconds: engineMs / 1000,
    promptNew: prompt - reused, promptReused: reused, generated,
  };
}

/** The price table of a config, when it has one. */
export type Prices = NonNullable<ResolvedConfig['prices']>;

/**
 * The cost figures of some rollouts, under `cost/`: sandbox wall and CPU seconds (and how many
 * rollouts had CPU measured), harness and engine seconds, prompt tokens new and reused, generated
 * tokens.
 */
export function rolloutCostValues(reports: readonly RolloutReport[]): Record<string, number> {
  const v: Record<string, number> = {
    'cost/rollouts': reports.length, 'cost/sandbox_seconds': 0, 'cost/sandbox_cpu_seconds': 0, 'cost/cpu_measured': 0,
    'cost/harness_seconds': 0, 'cost/engine_seconds': 0, 'cost/prompt_tokens_new': 0, 'cost/prompt_tokens_reused': 0, 'cost/generated_tokens': 0,
  };
  for (const r of reports) {
    const c = rolloutCost(r);
    v['cost/sandbox_seconds']! += c.sandboxSeconds;
    if (c.cpuSeconds !== undefined) { v['cost/sandbox_cpu_seconds']! += c.cpuSeconds; v['cost/cpu_measured']! += 1; }
    v['cost/harness_seconds']! += c.harnessSeconds;
    v['cost/engine_seconds']! += c.engineSeconds;
    v['cost/prompt_tokens_new']! += c.promptNew;
    v['cost/prompt_tokens_reused']! += c.promptReused;
    v['cost/generated_tokens']! += c.generated;
  }
  return v;
}

/**
 * Money of some cost figures under a price table: tokens per million, sandboxes per hour, the
 * engine's and (where `held.trainer`) the trainer's GPUs per hour of `held.seconds` (a step's or
 * an evaluation's wall time: they are held through it). Keys `cost/money` and its parts
 * `cost/money/{tokens,sandbox,engine,trainer}`.
 */
export function moneyOf(v: Record<string, number>, prices: Prices, held: { seconds: number; trainer: boolean }): Record<string, number> {
  const heldSeconds = held.seconds;
  const n = (k: string) => v[k] ?? 0;
  const tokens = (n('cost/prompt_tokens_new') * prices.promptTokens + n('cost/prompt_tokens_reused') * prices.reusedTokens
    + n('cost/generated_tokens') * prices.generatedTokens + n('cost/trainer_tokens') * prices.trainedTokens) / 1e6;
  const sandbox = (n('cost/sandbox_seconds') / 3600) * prices.sandboxHour;
  const engine = (heldSeconds / 3600) * prices.engineGpus * prices.engineGpuHour;
  const trainer = held.trainer ? (heldSeconds / 3600) * prices.trainerGpus * prices.trainerGpuHour : 0;
  return { 'cost/money': tokens + sandbox + engine + trainer, 'cost/money/tokens': tokens, 'cost/money/sandbox': sandbox, 'cost/money/engine': engine, 'cost/money/trainer': trainer };
}
