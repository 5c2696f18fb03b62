'use strict';
// The stages of one large request through the serving proxy, each measured on its own: the
// steps `ServingProxy` takes for a POST /v1/messages (body → request-json → wire parse → checks →
// ledger: template render and tokenize → generate → record write → commit), called here one at
// a time with a full garbage collection between them (run with --expose-gc, as bench/run.js
// does). For each stage: what it allocated (live plus garbage, before collecting), what is live
// after it, and the high-water mark while it ran (all earlier stages' live memory plus its
// allocations) — per byte of the body. V8 may collect during a stage, so "allocated" and "peak"
// are what was not collected by then: lower bounds of what a stage asks for, close for the large
// objects these are (large-object space is freed only by full collections).
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { CallStore, ScriptedEngine } = require('../../core/dist/index.js');
const { Sessions } = require('../../core/dist/4-proxy/sessions.js');
const { anthropicMessages } = require('../../core/dist/4-proxy/wire/anthropic.js');
const { checkArgumentsDepth } = require('../../core/dist/4-proxy/json-depth.js');
const { validateSampling } = require('../../core/dist/4-proxy/sampling.js');
const { drainTokens } = require('../../core/dist/4-proxy/generate.js');

const gc = global.gc;
if (!gc) throw new Error('run with --expose-gc (npm run bench:proxy-memory -- --stages)');
/**
 * The process's peak RSS, sampled every millisecond from a worker thread: the stages run
 * synchronously on the main thread, where no timer could sample them.
 */
function rssSampler() {
  const { Worker } = require('node:worker_threads');
  const peak = new BigInt64Array(new SharedArrayBuffer(8));
  const worker = new Worker(`const { workerData: peak } = require('node:worker_threads');
    setInterval(() => { const r = BigInt(process.memoryUsage.rss()); if (r > Atomics.load(peak, 0)) Atomics.store(peak, 0, r); }, 1);`, { eval: true, workerData: peak });
  worker.unref();
  return {
    /** Start a new peak from now. */
    reset() { Atomics.store(peak, 0, BigInt(process.memoryUsage.rss())); },
    peak() { return Math.max(Number(Atomics.load(peak, 0)), process.memoryUsage.rss()); },
    stop() { return worker.terminate(); },
  };
}

/** A full collection, and the freeing of the ArrayBuffers it found dead (swept after it, off the main thread). */
const collect = async () => { gc(); await new Promise((r) => setImmediate(r)); gc(); };
/** What the process holds: the V8 heap plus memory outside it (ArrayBuffers, Buffers). */
const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };

/** Measure `body` (a JSON text) through the stages with `template`; returns the table's rows. */
async function stages(text, template) {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-proxy-stages-'));
  const engine = new ScriptedEngine(() => ({ text: 'read it' }), template);
  const store = new CallStore(join(dir, 'calls'));
  const sessions = new Sessions(engine.chatTemplate);
  const session = sessions.open('stages');
  const rows = [];
  let bytes = 0;
  const state = {};
  // The tokenizer's lazily built tables (tens of MB for a real vocabulary) are made once per
  // process, not per request: built before the measuring starts.
  engine.chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'warm up: abcdefghijklmnopqrstuvwxyz 0123456789' }] }], tools: [] });
  await collect();
  const base = used();
  const rss = rssSampler();
  await new Promise((r) => setTimeout(r, 50));
  const baseRss = process.memoryUsage.rss();
  const stage = async (name, fn) => {
    await collect();
    const before = used();
    rss.reset();
    await fn();
    const after = used();
    const peakRss = rss.peak();
    // V8 keeps the last string a regular expression ran on (for RegExp.lastMatch) until the next
    // one runs, which in a proxy is within the next request: not the stage's to keep.
    /./.exec('.');
    await collect();
    const live = used();
    rows.push({ name, allocated: (after - before) / bytes, live: (live - base) / bytes, peak: (after - base) / bytes, rss: (peakRss - baseRss) / bytes });
  };
  try {
    // The body as readBody holds it: one Buffer of the declared length.
    await stage('body (read into one Buffer)', () => { state.body = Buffer.from(text); bytes = state.body.length; });
    await stage('request-json (body parsed; Buffer dropped)', () => { state.json = session.json.parse(state.body, anthropicMessages.historyKey); state.body = undefined; });
    await stage('wire parse (canonical conversation)', () => { state.parsed = anthropicMessages.parse(state.json, session.parsed); state.json = undefined; });
    await stage('depth and sampling checks', () => {
      checkArgumentsDepth(state.parsed.conversation, session.checked);
      session.checked = state.parsed.conversation.messages;
      validateSampling(state.parsed, anthropicMessages.format);
    });
    await stage('ledger prepare (render + tokenize)', () => { state.prepared = session.ledger.prepare(state.parsed.conversation); });
    await stage('generate', async () => {
      const outputIds = [];
      await drainTokens(engine, { promptIds: state.prepared.promptIds, sessionId: 'stages', sampling: { maxTokens: 16, temperature: 1, topP: 1 } }, 60_000, 60_000, () => undefined, (t) => { outputIds.push(t.tokenId); return true; });
      state.outputIds = outputIds;
    });
    await stage('record write (CallStore.append)', async () => {
      const p = state.prepared;
      await store.append({
        runId: 'bench', rolloutId: 'stages', callIndex: 0, wireFormat: 'anthropic-messages', requestedModel: 'm', promptIds: p.promptIds, outputIds: state.outputIds,
        outputLogprobs: state.outputIds.map(() => 0), finishReason: 'stop', origin: p.origin, drift: p.drift, sampling: { temperature: 1, topP: 1, logprobs: 'unknown' },
        policyVersion: 0, timings: { receivedAt: 0, finishedAt: 0 }, lineage: session.lineages.assign(0, p.origin, undefined),
      });
    });
    await stage('ledger commit (kept for the next call)', () => {
      const reply = engine.chatTemplate.parse(state.outputIds);
      state.prepared.commit({ callIndex: 0, outputIds: state.outputIds, finishReason: 'stop', reply });
      session.lastMain = { messages: state.parsed.conversation.messages, reply };
    });
    state.promptIds = state.prepared.promptIds.length;
    await stage('response sent (request done; session keeps)', () => { state.parsed = undefined; state.prepared = undefined; });
    await store.close('stages');
    await stage('session closed', async () => {
      await sessions.close('stages');
      session.lastMain = undefined;
      session.checked = [];
      // The close's promise reactions hold what they closed until the next turn.
      await new Promise((r) => setImmediate(r));
    });
    return { rows, bytes, ids: state.promptIds };
  } finally {
    await rss.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table, one row a stage, in bodies. */
function print(label, { rows, bytes, ids }) {
  console.log(`\n${label}: one body of ${(bytes / 1e6).toFixed(1)} MB, ${(ids / 1e6).toFixed(2)}M prompt ids (${(ids * 4 / bytes).toFixed(2)}x the body at 4 bytes an id)`);
  console.log(`${'stage'.padEnd(48)} ${'allocated'.padStart(9)} ${'live after'.padStart(10)} ${'peak'.padStart(6)} ${'peak RSS'.padStart(8)}   (x the body)`);
  for (const r of rows) console.log(`${r.name.padEnd(48)} ${r.allocated.toFixed(2).padStart(9)} ${r.live.toFixed(2).padStart(10)} ${r.peak.toFixed(2).padStart(6)} ${r.rss.toFixed(2).padStart(8)}`);
  // A stage's transient: its high-water mark over what was live before it and what is live after it.
  let transient = 0;
  let transientStage = '';
  rows.forEach((r, i) => {
    const t = r.peak - Math.max(i ? rows[i - 1].live : 0, r.live);
    if (t > transient) { transient = t; transientStage = r.name; }
  });
  return { peak: Math.max(...rows.map((r) => r.peak)), rss: Math.max(...rows.map((r) => r.rss)), kept: rows.find((r) => r.name.startsWith('response sent')).live, transient, transientStage };
}

module.exports = { stages, print };
