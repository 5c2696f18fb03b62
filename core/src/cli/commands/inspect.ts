import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ModelCallRecord } from '../../contracts/records';
import { ClawGymError, ErrorCodes } from '../../errors';
import { CallStore } from '../../5-records/call-store';
import type { CallHead } from '../../5-records/record-decode';
import { formatTable } from './plugins';
import { buildTreeFromStream } from '../../7-tree/build-stream';
import { applyFilters } from '../../7-tree/filters';
import { drawTree } from '../../7-tree/draw';
import { runTokenizer } from '../../report/run-tokenizer';
import { resolveConfig } from '../../config/load';
import { titoStats, titoSummary } from '../../5-records/tito-stats';
import { driftStats, driftSummary } from '../../5-records/drift-stats';

/** The call's line of conversation: its number and what started it (records before lineages say `-`). */
const lineageOf = (r: Pick<ModelCallRecord, 'lineage'>) =>
  (r.lineage ? `${r.lineage.id} ${r.lineage.cause}${r.lineage.startedBy !== undefined ? ` (call ${r.lineage.startedBy})` : ''}` : '-');

const describeOrigin = (r: Pick<ModelCallRecord, 'origin'>) =>
  r.origin.kind === 'reuse' ? `reuse of call ${r.origin.parentCall} (${r.origin.reusedTokens} tokens)`
    : r.origin.kind === 'retry' ? `retry of call ${r.origin.of}` : `fork: ${r.origin.reason}`;

/**
/** Every rollout's records without prompt ids (heads: stripped of their log-probabilities too), one file after another. */
async function headsOf(store: CallStore, ids: readonly string[]): Promise<{ id: string; records: CallHead[] }[]> {
  const out: { id: string; records: CallHead[] }[] = [];
  for (const id of ids) {
    const records: CallHead[] = [];
    for await (const h of store.heads(id)) records.push({ ...h, outputLogprobs: [] });
    out.push({ id, records });
  }
  return out;
}

/**
 * `clawgym inspect <run> [--rollout ID] [--tokenizer FOLDER]`: the calls of a run's rollouts as recorded by the
 * proxy — wire format, how each prompt was made (TITO reuse, retry or fork, with the reason),
 * token counts — and the TITO reuse rate.
 */
export async function inspect(runPath: string, opts: { rollout?: string; json?: boolean; tokenizer?: string }, io: { out: (s: string) => void; cwd: string }): Promise<void> {
  const runDir = resolve(io.cwd, runPath);
  const callsDir = join(runDir, 'calls');
  if (!existsSync(callsDir)) {
    throw new ClawGymError(ErrorCodes.USAGE, `no call records in ${runDir} (expected a calls/ folder)`, { hint: 'Pass a run directory, e.g. runs/default.' });
  }
  const store = new CallStore(callsDir);
  const ids = opts.rollout ? [opts.rollout] : readdirSync(callsDir).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -6)).sort();
  // Statistics read records without their prompt ids, a line at a time: a session file of any
  // size is read in the memory of its calls' heads. Only one rollout's tree reads the ids,
  // streamed.
  const byRollout = await headsOf(store, ids);
  if (opts.rollout && byRollout[0]!.records.length === 0) {
    throw new ClawGymError(ErrorCodes.USAGE, `rollout "${opts.rollout}" has no records in ${callsDir}`, { hint: `Rollouts there: ${readdirSync(callsDir).map((f) => f.replace(/\.jsonl$/, '')).join(', ')}` });
  }
  const all = byRollout.flatMap((r) => r.records);
  if (opts.json) {
    io.out(`${JSON.stringify({ run: runDir, tito: titoStats(all), drift: driftStats(all), rollouts: byRollout.map((r) => ({ rolloutId: r.id, tito: titoStats(r.records), drift: driftStats(r.records) })) }, null, 2)}\n`);
    return;
  }
  if (opts.rollout) {
    const records = byRollout[0]!.records;
    const rows = records.map((r) => {
      const reused = r.origin.kind === 'reuse' ? r.origin.reusedTokens : r.origin.kind === 'retry' ? r.promptLength : 0;
      return [String(r.callIndex), r.role ?? '-', lineageOf(r), r.wireFormat, String(r.promptLength), String(r.promptLength - reused), String(r.outputIds.length), r.finishReason, describeOrigin(r), r.drift?.class ?? '-'];
    });
    const drifted = byRollout[0]!.records.filter((r) => r.drift && r.drift.class !== 'clean').map((r) => `  call ${r.callIndex} ${r.drift!.class}: ${r.drift!.reason}\n`).join('');
    io.out(`rollout ${opts.rollout} (${runDir})\n${formatTable(['CALL', 'ROLE', 'LINE', 'WIRE', 'PROMPT', 'NEW', 'OUTPUT', 'FINISH', 'PROMPT ORIGIN', 'DRIFT'], rows)}\n${titoSummary(byRollout[0]!.records)}\n${driftSummary(byRollout[0]!.records)}\n${drifted}`);
    // How request features were handled (tools left out or refused, schemas), once each.
    for (const n of new Set(byRollout[0]!.records.flatMap((r) => r.notes ?? []))) io.out(`  note: ${n}\n`);
    io.out('\n');
    // The prefix tree, through the default filters, read with the run's own tokenizer.
    const { tokenizer, chatTemplate, from } = runTokenizer(runDir, opts.tokenizer, io.cwd);
    // Built from the records streamed one at a time: the tree's memory, not the file's.
    const tree = applyFilters(await buildTreeFromStream(records, store.stream(opts.rollout), {
      // The records alone cannot tell a verifier's outcome; a rollout whose every call failed is an infra failure.
      rolloutId: opts.rollout, taskId: '?', category: '?', harness: '?', outcome: titoStats(byRollout[0]!.records).failedRollouts.length ? 'infra-error' : 'ok', reward: 0,
    }, { messageEndId: chatTemplate.stopIds[0]! }), resolveConfig({}, { rootDir: io.cwd }).tree);
    io.out(`tree (text read with ${from}):\n${drawTree(tree, (ids) => tokenizer.decode(ids))}\n`);
    return;
  }
  const rows = byRollout.map(({ id, records }) => {
    const s = titoStats(records);
    const failed = s.failedRollouts.length > 0;
    const d = driftStats(records);
    return [id, String(s.calls), failed ? 'n/a' : `${(100 * s.rate).toFixed(1)}%`, String(s.retry), String(s.forks), String(s.side), failed ? `all ${s.failed}` : String(s.failed), `${d.clean}/${d.realigned}/${d.fork}`, String(records.reduce((n, r) => n + r.outputIds.length, 0))];
  });
  io.out(`${runDir}\n${formatTable(['ROLLOUT', 'CALLS', 'TITO REUSE', 'RETRIES', 'FORKS', 'SIDE', 'FAILED', 'DRIFT C/R/F', 'OUTPUT TOKENS'], rows)}\nall: ${titoSummary(all)}\nall: ${driftSummary(all)}\n`);
  for (const r of driftStats(all).reasons) io.out(`  realigned or forked ${r.calls}×: ${r.reason}\n`);
  for (const f of titoStats(all).forkReasons) io.out(`  fork ${f.rolloutId} call ${f.callIndex}: ${f.reason}\n`);
}
