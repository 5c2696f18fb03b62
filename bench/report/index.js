'use strict';
// bench:report — how fast the report of a 100,000-rollout run opens in headless Chromium, beside
// the same report of a 1,000-rollout run in the same session. Both runs are synthetic but written
// by core's own writers (CallStore for the call records, the rollout log for the list) from
// conversations rendered by the byte-level ChatML template; the reports are written by
// `writeReport` (1,000 rollouts: one self-contained file; 100,000: a page with data files beside
// it) and served by `serveReport`. Measured: page load to the first rows shown (open), to the whole
// list loaded (loaded), a filter over the whole list, and a rollout opened (its calls and tree shown).
//   node bench/run.js report [small] [large]     (default 1000 100000)
const { mkdtempSync, rmSync, writeFileSync, mkdirSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const core = require('../../core/dist/index.js');

const { CallStore, byteChatMl, buildTree, appendRollouts, rolloutEntryOf, writeReport, serveReport, Rng } = core;
const [SMALL, LARGE] = [Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 100000)];
const PER_STEP = 64;
const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!chromiumPath) { console.error('bench:report needs Chromium: apt-get install chromium'); process.exit(1); }

const { tokenizer, chatTemplate } = byteChatMl();
const text = (t) => [{ type: 'text', text: t }];

/** One rollout's three calls, as the proxy records them: a first call, then two that reuse it. */
function conversation(rng, rolloutId) {
  const word = ['yak', 'tea', 'urn', 'fig', 'owl'][rng.int(0, 4)];
  const tools = [{ name: 'write_file', description: 'write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } }];
  const first = chatTemplate.render({ messages: [{ role: 'system', parts: text('You are a careful agent.') }, { role: 'user', parts: text(`Write ${word.toUpperCase()} into ${word}.txt`) }], tools });
  const replies = [
    [{ type: 'tool_call', id: 'c1', name: 'write_file', arguments: JSON.stringify({ path: `${word}.txt`, content: word.toUpperCase() }) }],
    text('Done.'),
  ];
  const records = [];
  let prompt = first;
  const now = Date.now();
  for (let c = 0; c < 3; c++) {
    const outputIds = chatTemplate.renderReply(c === 2 ? text('All done.') : replies[c], tools);
    const origin = c === 0 ? { kind: 'fork', reason: 'first call of the session' } : { kind: 'reuse', parentCall: c - 1, reusedTokens: records[c - 1].promptIds.length + records[c - 1].outputIds.length };
    records.push({
      runId: 'bench', rolloutId, callIndex: c, wireFormat: 'openai-chat', requestedModel: 'policy', promptIds: Int32Array.from(prompt), outputIds,
      outputLogprobs: outputIds.map(() => -0.1), finishReason: c === 0 ? 'tool_calls' : 'stop', origin, drift: { class: rng.next() < 0.05 ? 'realigned' : 'clean', reason: 'extends call 0: a reply tokenized another way' },
      policyVersion: 0, timings: { receivedAt: now, firstTokenAt: now + 5, finishedAt: now + 20 },
    });
    const next = chatTemplate.renderContinuation([{ role: c === 0 ? 'tool' : 'user', parts: c === 0 ? [{ type: 'tool_result', callId: 'c1', content: 'wrote 3 bytes' }] : text('check it') }], 'stop');
    prompt = [...prompt, ...outputIds, ...next];
  }
  return records;
}

/** A run folder of `n` rollouts: metrics, the rollout log, and every rollout's call records. */
async function syntheticRun(dir, n) {
  const rng = new Rng(7);
  const store = new CallStore(join(dir, 'calls'));
  const harnesses = ['agentloop', 'claude-code', 'codex', 'openclaw'];
  const categories = ['write', 'csv', 'json', 'shell'];
  const metrics = [];
  for (let step = 1, at = 0; at < n; step++) {
    const entries = [];
    let sum = 0;
    for (let i = 0; i < PER_STEP && at < n; i++, at++) {
      const id = `s${step}a1-t${i >> 3}-${harnesses[i % 4]}-${i & 7}`;
      const records = conversation(rng, id);
      for (const r of records) await store.append(r);
      await store.close(id);
      const infra = rng.next() < 0.02;
      const pass = !infra && rng.next() < Math.min(0.9, 0.2 + step / 3000);
      const report = {
        request: { taskId: `task-${rng.int(0, 999)}`, category: categories[rng.int(0, 3)], harness: harnesses[i % 4] },
        rolloutId: id, sessionId: id, attempts: 1, outcome: infra ? 'infra-error' : 'ok', reward: infra ? NaN : pass ? 1 : 0,
        verdict: infra ? undefined : { reward: pass ? 1 : 0, pass, details: pass ? 'the file is right' : 'the file is wrong' },
        details: infra ? 'sandbox creation failed: synthetic' : pass ? 'the file is right' : 'the file is wrong',
        calls: 3, durationMs: 900, records, exit: infra ? undefined : { code: 0, timedOut: false }, phases: { sandboxMs: 40, setupMs: 3, harnessMs: 800, verifyMs: 4 },
      };
      const tree = buildTree(records, { rolloutId: id, taskId: report.request.taskId, category: report.request.category, harness: report.request.harness, outcome: report.outcome, reward: pass ? 1 : 0 }, { messageEndId: chatTemplate.stopIds[0] });
      const adv = new Map(tree.nodes.filter((x) => x.kind === 'generated').map((x) => [x.id, new Float32Array(x.tokens.length).fill(pass ? 0.5 : -0.5)]));
      entries.push(rolloutEntryOf(step, report, tree, infra ? undefined : { algorithm: 'grpo', advantages: new Map([[id, adv]]), metrics: {} }, 0));
      if (!infra) sum += pass ? 1 : 0;
    }
    await appendRollouts(dir, entries);
    metrics.push({ kind: 'step', step, time: 0, values: { reward: sum / entries.length, rollouts: entries.length, infra: 0, seconds: 60, 'seconds/rollouts': 40, 'tokens/generated': 9000 } });
  }
  writeFileSync(join(dir, 'metrics.jsonl'), metrics.map((m) => JSON.stringify(m)).join('\n') + '\n');
}

const secs = (t0) => (performance.now() - t0) / 1000;

/** Open the report at `url`; time the first rows, the whole list, a filter and an opened rollout. */
async function measure(browser, url, ord) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let t = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector('body[data-list-ready]', { timeout: 120_000 });
  const open = secs(t);
  await page.waitForSelector('body[data-list-loaded]', { timeout: 120_000 });
  const loaded = secs(t);
  t = performance.now();
  const before = await page.getAttribute('#list-count', 'data-matching');
  await page.selectOption('#f-pass', '1');
  await page.waitForFunction((b) => document.getElementById('list-count').getAttribute('data-matching') !== b, before);
  const filter = secs(t);
  t = performance.now();
  await page.evaluate((o) => { window.location.hash = `rollout=${o}`; }, ord);
  await page.waitForSelector(`#detail[data-ord="${ord}"] .call`, { timeout: 60_000 });
  const rollout = secs(t);
  const rows = Number(await page.getAttribute('body', 'data-list-loaded'));
  await page.close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  return { open, loaded, filter, rollout, rows };
}

(async () => {
  // In memory where there is a tmpfs: the call store syncs each rollout's file as it closes it,
  // and 100,000 syncs to disk would time the disk, not the report.
  const root = mkdtempSync(join(process.env.CLAWGYM_BENCH_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'clawgym-bench-report-'));
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const out = {};
    for (const n of [SMALL, LARGE]) {
      const dir = join(root, `run-${n}`);
      mkdirSync(dir);
      let t = performance.now();
      await syntheticRun(dir, n);
      const made = secs(t);
      t = performance.now();
      const file = await writeReport(dir);
      const written = secs(t);
      const m = await measure(browser, `file://${file}`, n - 1);
      if (m.rows !== n) throw new Error(`the report of ${n} rollouts listed ${m.rows}`);
      t = performance.now();
      const server = await serveReport([dir]);
      const serveStart = secs(t);
      const s = await measure(browser, server.url, n - 1);
      await server.close();
      out[n] = { made, written, m, serveStart, s };
      console.log(`${n} rollouts: synthetic run ${made.toFixed(1)} s, report written ${written.toFixed(1)} s (${n <= 1000 ? 'one file' : 'paged'}); `
        + `file: first rows ${m.open.toFixed(2)} s, whole list ${m.loaded.toFixed(2)} s, filter ${m.filter.toFixed(3)} s, rollout ${m.rollout.toFixed(3)} s; `
        + `--serve: start ${serveStart.toFixed(2)} s, first rows ${s.open.toFixed(2)} s, whole list ${s.loaded.toFixed(2)} s, rollout ${s.rollout.toFixed(3)} s`);
      rmSync(dir, { recursive: true, force: true });
    }
    const [a, b] = [out[SMALL], out[LARGE]];
    const f = (x) => x.toFixed(3);
    console.log(`RESULT report rollouts=${LARGE} ref_rollouts=${SMALL} open_s=${f(b.m.open)} ref_open_s=${f(a.m.open)} loaded_s=${f(b.m.loaded)} ref_loaded_s=${f(a.m.loaded)} `
      + `filter_s=${f(b.m.filter)} ref_filter_s=${f(a.m.filter)} rollout_s=${f(b.m.rollout)} ref_rollout_s=${f(a.m.rollout)} `
      + `serve_start_s=${f(b.serveStart)} ref_serve_start_s=${f(a.serveStart)} serve_loaded_s=${f(b.s.loaded)} ref_serve_loaded_s=${f(a.s.loaded)} serve_rollout_s=${f(b.s.rollout)} ref_serve_rollout_s=${f(a.s.rollout)} `
      + `write_s=${f(b.written)} ref_write_s=${f(a.written)}`);
  } finally {
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
})().catch((err) => { console.error(err); process.exit(1); });
