'use strict';
// bench:tree — prefix-tree build throughput for 1,000 rollouts x 50 calls with a history growing to
// ~30k tokens; time per new token late vs early in the history (linear, not quadratic); and the
// training-token reduction of the tree against one sample per call, on the call records recorded
// from the real harness CLIs (core/src/7-tree/__fixtures__/harness-calls) and on the synthetic ones.
const { join } = require('node:path');
const { readdirSync } = require('node:fs');
const { buildTree, applyFilters, CallStore, byteChatMl, Rng } = require('../../core/dist/index.js');

const messageEndId = byteChatMl().tokenizer.special('<|im_end|>');
const ROLLOUTS = 1000;
const CALLS = 50;
const PER_CALL = 600; // new prompt tokens per call: 50 x 600 = 30k tokens of history
const OUTPUT = 60;

/** Records as the proxy writes them: prompts are views of one growing buffer, with some retries and forks. */
function syntheticRollout(seed, { forkRate = 0.02, retryRate = 0.05 } = {}) {
  const rng = new Rng(seed);
  const buf = new Int32Array(CALLS * (PER_CALL + OUTPUT) + 2000);
  let len = 0;
  const push = (n) => { for (let i = 0; i < n; i++) buf[len++] = rng.int(0, 255); };
  buf[len++] = 258 + 0; push(200); buf[len++] = 258; // a first message ending with <|im_end|> (258)
  const records = [];
  let last;
  for (let c = 0; c < CALLS; c++) {
    const retry = last && rng.next() < retryRate;
    const fork = last && !retry && rng.next() < forkRate;
    let promptIds;
    let origin;
    if (retry) {
      promptIds = last.promptIds; origin = { kind: 'retry', of: last.callIndex };
    } else if (fork) {
      // A rewritten history: the harness changed one earlier token; the session goes on from there.
      buf[Math.floor(len / 2)] ^= 1; promptIds = buf.slice(0, len); origin = { kind: 'fork', reason: 'history rewritten' };
    } else {
      const reused = last ? len : 0;
      if (last) for (const id of last.outputIds) buf[len++] = id;
      push(PER_CALL);
      promptIds = buf.subarray(0, len);
      origin = last ? { kind: 'reuse', parentCall: last.callIndex, reusedTokens: reused + last.outputIds.length } : { kind: 'fork', reason: 'first call of the session' };
    }
    const outputIds = Array.from({ length: OUTPUT }, () => rng.int(0, 255));
    const r = { runId: 'b', rolloutId: `r${seed}`, callIndex: c, wireFormat: 'openai-chat', requestedModel: 'm', promptIds, outputIds, outputLogprobs: outputIds.map(() => -1), finishReason: 'stop', origin, policyVersion: 0, timings: { receivedAt: 0, finishedAt: 0 } };
    records.push(r);
    last = r;
  }
  return records;
}

const info = (id) => ({ rolloutId: id, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 });
const treeTokens = (t) => t.nodes.reduce((n, x) => n + x.tokens.length, 0);
const perCallTokens = (rs) => rs.reduce((n, r) => n + r.promptIds.length + r.outputIds.length, 0);
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function main() {
  // 1) Throughput over 1,000 rollouts (records generated one rollout at a time, outside the timer).
  let buildMs = 0; let newTokens = 0; let recorded = 0;
  for (let i = 0; i < ROLLOUTS; i++) {
    const records = syntheticRollout(i);
    const t0 = process.hrtime.bigint();
    const tree = applyFilters(buildTree(records, info(`r${i}`), { messageEndId }), { dropDeadLeaves: true, excludeAuxiliary: true, maxBranches: 16 });
    buildMs += ms(t0);
    newTokens += treeTokens(tree);
    recorded += perCallTokens(records);
  }
  // 2) Time per new token early (calls 1-10) vs late (calls 41-50), from builds of call prefixes.
  let early = 0; let late = 0; let earlyTok = 0; let lateTok = 0;
  for (let i = 0; i < 100; i++) {
    // Retries attach by their hint; forks (token-level search over the whole history) are left out here.
    const records = syntheticRollout(10_000 + i, { forkRate: 0 });
    // Best of 7 builds of each prefix: the differences are small, GC pauses are not.
    const time = (k) => {
      let best = Infinity; let tokens = 0;
      for (let rep = 0; rep < 7; rep++) { const t0 = process.hrtime.bigint(); const t = buildTree(records.slice(0, k), info('x'), { messageEndId }); best = Math.min(best, ms(t0)); tokens = treeTokens(t); }
      return [best, tokens];
    };
    const [t10, n10] = time(10); const [t40, n40] = time(40); const [t50, n50] = time(Math.min(50, records.length));
    early += t10; earlyTok += n10; late += t50 - t40; lateTok += n50 - n40;
  }
  const lateVsEarly = (late / lateTok) / (early / earlyTok);
  // 3) Dedup on the records recorded from the real harness CLIs.
  const dir = join(__dirname, '..', '..', 'core', 'src', '7-tree', '__fixtures__', 'harness-calls');
  let harnessPerCall = 0; let harnessTree = 0;
  for (const f of readdirSync(dir)) {
    const records = await new CallStore(dir).read(f.replace(/\.jsonl$/, ''));
    harnessPerCall += perCallTokens(records);
    harnessTree += treeTokens(buildTree(records, info(f), { messageEndId }));
  }
  console.log(`${ROLLOUTS} rollouts x ${CALLS} calls: ${(recorded / 1e6).toFixed(0)}M recorded tokens, ${(newTokens / 1e6).toFixed(1)}M tree tokens, built in ${(buildMs / 1000).toFixed(2)} s`);
  console.log(`  ${(newTokens / (buildMs / 1000) / 1e6).toFixed(1)}M tree tokens/s (${(recorded / (buildMs / 1000) / 1e6).toFixed(0)}M recorded tokens/s)`);
  console.log(`time per new token, calls 41-50 vs calls 1-10: ${lateVsEarly.toFixed(2)}x`);
  console.log(`dedup: real harness traces ${(harnessPerCall / harnessTree).toFixed(2)}x fewer tokens than one sample per call; synthetic 50-call rollouts ${(recorded / newTokens).toFixed(1)}x`);
  console.log(`RESULT tree tokens_per_s=${Math.round(newTokens / (buildMs / 1000))} recorded_tokens_per_s=${Math.round(recorded / (buildMs / 1000))} late_vs_early_per_token=${lateVsEarly.toFixed(2)} dedup_ratio=${(harnessPerCall / harnessTree).toFixed(2)} dedup_ratio_synthetic=${(recorded / newTokens).toFixed(1)}`);
}
main().catch((e) => { console.error(e); process.exit(1); });
