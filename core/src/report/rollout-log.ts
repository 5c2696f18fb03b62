import { createReadStream } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promptLengthOf, type CallSummary, type ModelCallRecord } from '../contracts/records';
import type { AdvantageResult, RolloutTree } from '../contracts/tree';
import type { RolloutPhases, RolloutReport } from '../6-rollout/runner';
import { driftStats } from '../5-records/drift-stats';
import { titoStats } from '../5-records/tito-stats';
import { rolloutCost, type RolloutCost } from '../6-rollout/cost';

/** Where a run's rollout log lies: one JSON line per finished rollout, appended step by step. */
export const rolloutsFile = (runDir: string) => join(runDir, 'rollouts.jsonl');

/** One node of a rollout's tree as the report draws it: counts and the advantage, no ids. */
export interface TreeNodeEntry {
  id: number;
  parent: number;
  kind: 'inserted' | 'generated';
  tokens: number;
  callIndex: number;
  /** The filter that took the node out of the loss, with its reason. */
  removedBy?: string;
  /** Mean advantage over the node's tokens, for generated nodes that were trained. */
  advantage?: number;
  /** Range of the per-token advantages, where they differ (PPO's GAE). */
  advantageRange?: [number, number];
  auxiliary?: boolean;
}

/**
 * What the report needs of one rollout, written when its step is trained: the rollout's
 * outcome, verdict, sandbox exit and timings, TITO and drift of its calls, and its tree with
 * the advantages it got. The calls themselves stay in the call store (`calls/<session>.jsonl`).
 */
export interface RolloutEntry {
  rolloutId: string;
  /** The proxy session of the final attempt: the name of its call records. */
  sessionId: string;
  step: number;
  taskId: string;
  category: string;
  harness: string;
  outcome: RolloutReport['outcome'];
  /** Null for infrastructure failures: they have no reward. */
  reward: number | null;
  pass: boolean | null;
  verdict?: string;
  details: string;
  infraClass?: string;
  attempts: number;
  exit?: RolloutReport['exit'];
  phases?: RolloutPhases;
  durationMs: number;
  calls: number;
  /** Later main calls that reused their parent's ids, and those that forked. */
  tito: { reuse: number; forks: number; retry: number; side: number; failed: number };
  drift: { clean: number; realigned: number; fork: number };
  promptTokens: number;
  outputTokens: number;
  /** Policy versions the calls were generated under (lineage: which weights wrote it). */
  policy?: [number, number];
  /** Trained at this policy version (staleness = trainedAt − policy[0]). */
  trainedAt?: number;
  tree?: { nodes: TreeNodeEntry[]; dropped?: string; trainedTokens: number; untrainedTokens: number };
  /** What the rollout used: sandbox wall and CPU seconds, harness and engine seconds, prompt tokens new and reused, generated tokens. */
  cost?: RolloutCost;
}

function treeEntry(tree: RolloutTree, advantages?: AdvantageResult): RolloutEntry['tree'] {
  const adv = advantages?.advantages.get(tree.rolloutId);
  const aux = new Set<number>();
  for (const root of tree.auxiliaryRoots) aux.add(root);
  let trainedTokens = 0;
  let untrainedTokens = 0;
  const nodes = tree.nodes.map((n): TreeNodeEntry => {
    if (n.parent >= 0 && aux.has(n.parent)) aux.add(n.id); // parents come before their children
    const a = adv?.get(n.id);
    const e: TreeNodeEntry = { id: n.id, parent: n.parent, kind: n.kind, tokens: n.tokens.length, callIndex: n.callIndex };
    if (n.removedBy) e.removedBy = n.removedBy;
    if (aux.has(n.id)) e.auxiliary = true;
    if (a && a.length) {
      let sum = 0; let lo = Infinity; let hi = -Infinity;
      for (const v of a) { sum += v; lo = Math.min(lo, v); hi = Math.max(hi, v); }
      e.advantage = sum / a.length;
      if (hi - lo > 1e-9) e.advantageRange = [lo, hi];
    }
    if (n.kind === 'generated') {
      if (a && !tree.dropped && !n.removedBy && !e.auxiliary) trainedTokens += n.tokens.length;
      else untrainedTokens += n.tokens.length;
    }
    return e;
  });
  return { nodes, ...(tree.dropped ? { dropped: tree.dropped } : {}), trainedTokens, untrainedTokens };
}

function versions(records: readonly CallSummary[]): [number, number] | undefined {
  if (!records.length) return undefined;
  let lo = Infinity; let hi = -Infinity;
  for (const r of records) { lo = Math.min(lo, r.policyVersion); hi = Math.max(hi, r.policyVersion); }
  return [lo, hi];
}

/** The log entry of one rollout of a trained step. */
export function rolloutEntryOf(step: number, report: RolloutReport, tree?: RolloutTree, advantages?: AdvantageResult, trainedAt?: number): RolloutEntry {
  const t = titoStats(report.records);
  const d = driftStats(report.records);
  const infra = report.outcome === 'infra-error';
  return {
    rolloutId: report.rolloutId, sessionId: report.sessionId, step,
    taskId: report.request.taskId, category: report.request.category, harness: report.request.harness,
    outcome: report.outcome, reward: infra || Number.isNaN(report.reward) ? null : report.reward,
    pass: infra ? null : Boolean(report.verdict?.pass),
    ...(report.verdict ? { verdict: report.verdict.details } : {}),
    details: report.details,
    ...(infra ? { infraClass: report.infraClass ?? 'runner' } : {}),
    attempts: report.attempts,
    ...(report.exit ? { exit: report.exit } : {}), ...(report.phases ? { phases: report.phases } : {}),
    durationMs: report.durationMs, calls: report.records.length,
    tito: { reuse: t.reuse, forks: t.forks, retry: t.retry, side: t.side, failed: t.failed },
    drift: { clean: d.clean, realigned: d.realigned, fork: d.fork },
    promptTokens: report.records.reduce((n, r) => n + promptLengthOf(r), 0),
    outputTokens: report.records.reduce((n, r) => n + r.outputIds.length, 0),
    ...(versions(report.records) ? { policy: versions(report.records) } : {}),
    ...(trainedAt !== undefined ? { trainedAt } : {}),
    ...(tree ? { tree: treeEntry(tree, advantages) } : {}),
    cost: rolloutCost(report),
  };
}

/** Append a step's rollouts to the log: one line each, in one write. */
export async function appendRollouts(runDir: string, entries: readonly RolloutEntry[]): Promise<void> {
  if (!entries.length) return;
  await mkdir(runDir, { recursive: true });
  await appendFile(rolloutsFile(runDir), entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
}

/**
 * The rollout log, one entry at a time, read as a stream (a 100,000-rollout log is tens of
 * megabytes). A line a kill cut short is skipped; a log that is not there yields nothing.
 */
export async function* readRollouts(runDir: string): AsyncGenerator<RolloutEntry> {
  const stream = createReadStream(rolloutsFile(runDir), { encoding: 'utf8' });
  const missing = new Promise<boolean>((res) => { stream.once('error', () => res(true)); stream.once('open', () => res(false)); });
  if (await missing) return;
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    try { yield JSON.parse(line) as RolloutEntry; } catch { /* a cut last line */ }
  }
}
