'use strict';
// bench:records — a synthetic long-horizon session (200 calls growing to ~128k tokens, a fork
// every 10th call) written in today's record format (format 2: prompts by reference, base64
// varint ids) and in the earlier one (ids as JSON numbers, reuses as tails, forks whole), then
// read back by CallStore in a child process each: bytes on disk, bytes per new token, the
// reader's peak RSS and time, each beside the earlier format's in the same run.
const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { CallStore } = require('../../core/dist/index.js');

const CALLS = 200;
const OUT = 40;
let seed = 12345;
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
const ids = (n) => Int32Array.from({ length: n }, () => rand() % 151_000);

function session() {
  const records = [];
  let prompt = ids(2000);
  let newTokens = prompt.length;
  for (let i = 0; i < CALLS; i++) {
    let origin;
    if (i === 0) origin = { kind: 'fork', reason: 'first call of the session' };
    else if (i % 10 === 0) {
      // A fork: the history rewritten near its end (a compaction, an edited message).
      const kept = Math.floor(prompt.length * 0.97);
      const tail = ids(500);
      const next = new Int32Array(kept + tail.length); next.set(prompt.subarray(0, kept)); next.set(tail, kept);
      prompt = next; newTokens += tail.length;
      origin = { kind: 'fork', reason: 'the history changed' };
    } else {
      const prev = records[i - 1];
      const tail = ids(700);
      const next = new Int32Array(prev.promptIds.length + OUT + tail.length);
      next.set(prev.promptIds); next.set(Int32Array.from(prev.outputIds), prev.promptIds.length); next.set(tail, prev.promptIds.length + OUT);
      origin = { kind: 'reuse', parentCall: i - 1, reusedTokens: prev.promptIds.length + OUT };
      prompt = next; newTokens += tail.length;
    }
    const outputIds = Array.from(ids(OUT));
    newTokens += OUT;
    records.push({ runId: 'bench', rolloutId: 's', callIndex: i, wireFormat: 'anthropic-messages', requestedModel: 'm', promptIds: prompt, outputIds,
      outputLogprobs: outputIds.map(() => -Math.random() * 3), finishReason: 'tool_calls', origin, policyVersion: 0, timings: { receivedAt: i, finishedAt: i + 1 }, role: 'main' });
  }
  return { records, newTokens };
}

/** The earlier format's line of a record (what the store wrote before format 2). */
function earlierLine(r) {
  const { promptIds, ...rest } = r;
  const head = JSON.stringify(rest);
  if (r.origin.kind === 'reuse') return `${head.slice(0, -1)},"promptTail":[${Array.from(promptIds.subarray(r.origin.reusedTokens)).join(',')}]}\n`;
  return `${head.slice(0, -1)},"promptIds":[${Array.from(promptIds).join(',')}]}\n`;
}

function readIn(child, dir) {
  const code = `const { CallStore } = require(${JSON.stringify(join(__dirname, '../../core/dist/index.js'))});
    const t = process.hrtime.bigint();
    new CallStore(${JSON.stringify(dir)}).read('s').then((rs) => {
      const n = rs.reduce((a, r) => a + r.promptIds.length, 0);
      process.stdout.write(JSON.stringify({ calls: rs.length, ids: n, s: Number(process.hrtime.bigint() - t) / 1e9, rss: process.resourceUsage().maxRSS / 1024 }));
    });`;
  return JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', maxBuffer: 1 << 20 }));
}

(async () => {
  const { records, newTokens } = session();
  const dirs = { now: mkdtempSync(join(tmpdir(), 'bench-records-')), before: mkdtempSync(join(tmpdir(), 'bench-records-v1-')) };
  try {
    const store = new CallStore(dirs.now);
    for (const r of records) await store.append(r);
    await store.close('s');
    writeFileSync(join(dirs.before, 's.jsonl'), records.map(earlierLine).join(''));
    const expectIds = records.reduce((a, r) => a + r.promptIds.length, 0);
    const out = {};
    for (const k of ['now', 'before']) {
      const bytes = statSync(join(dirs[k], 's.jsonl')).size;
      const best = [readIn(k, dirs[k]), readIn(k, dirs[k]), readIn(k, dirs[k])].sort((a, b) => a.s - b.s)[0];
      if (best.calls !== CALLS || best.ids !== expectIds) throw new Error(`${k}: read back ${best.calls} calls, ${best.ids} ids; expected ${CALLS}, ${expectIds}`);
      out[k] = { bytes, perToken: bytes / newTokens, rss: best.rss, s: best.s };
      console.log(`${k === 'now' ? 'format 2' : 'earlier '}: ${bytes} bytes on disk, ${(bytes / newTokens).toFixed(2)} bytes per new token, read peak RSS ${best.rss.toFixed(0)} MB, read ${best.s.toFixed(3)} s`);
    }
    const max = records[CALLS - 1].promptIds.length;
    console.log(`(${CALLS} calls, last prompt ${max} tokens, ${newTokens} new tokens, ${CALLS / 10 - 1} forks; every prompt rebuilt and checked)`);
    console.log(`RESULT records calls=${CALLS} bytes_on_disk=${out.now.bytes} bytes_on_disk_before=${out.before.bytes} bytes_per_new_token=${out.now.perToken.toFixed(2)} bytes_per_new_token_before=${out.before.perToken.toFixed(2)} read_peak_rss_mb=${out.now.rss.toFixed(0)} read_peak_rss_mb_before=${out.before.rss.toFixed(0)} read_s=${out.now.s.toFixed(3)} read_s_before=${out.before.s.toFixed(3)}`);
  } finally {
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e); process.exit(1); });
