'use strict';
// bench/template/stages.js — how long each stage of a proxied call takes under bench:template's
// open-loop load (256 sessions, 50 calls/s, Qwen3's template and tokenizer, null engine), and how
// long the bare node:http server spends on the same requests: `node bench/template/stages.js [seconds]`.
//
// No patched build: the stages are methods of core/dist, wrapped at run time with a clock read on
// each side (about a microsecond each), so their figures are upper bounds and nested stages count
// inside their parents. "inside" is from the request body's last byte to `res.end()` returning,
// for the proxy and for the bare server alike. A wrapped name that no longer exists is reported,
// not guessed. What a stage costs here is not what leaving it out saves: after the 20 ms between
// calls the caches are cold, and a removed stage's misses move to the next one (docs/templates.md,
// "Where the time goes"); measure a change with compare.js.
const http = require('node:http');
const { join } = require('node:path');

const dist = join(__dirname, '..', '..', 'core', 'dist');
const core = require(join(dist, 'index.js'));
const { modelDir, NOW, nullEngineProxy, answerBytes, bareServer, loadApart, pct } = require('./load.js');

const samples = new Map();
let measuring = false;
const note = (label, t0) => {
  const us = Number(process.hrtime.bigint() - t0) / 1000;
  if (!samples.has(label)) samples.set(label, []);
  samples.get(label).push(us);
};
const missing = [];

/** Time `owner[name]` under `label` (`async`: until its promise settles). */
function time(owner, name, label, async = false) {
  const f = owner?.[name];
  if (typeof f !== 'function') { missing.push(label); return; }
  owner[name] = function timed(...args) {
    if (!measuring) return f.apply(this, args);
    const t0 = process.hrtime.bigint();
    if (async) {
      const p = f.apply(this, args);
      const done = () => note(label, t0);
      p.then(done, done);
      return p;
    }
    try { return f.apply(this, args); } finally { note(label, t0); }
  };
}

const mod = (path) => require(join(dist, path));
const template = Object.values(mod('model/jinja-template.js')).find((v) => typeof v === 'function' && v.prototype?.continueFrom)?.prototype;
const STAGES = [
  [mod('proxy/request-json.js').RequestJson?.prototype, 'parse', 'request JSON'],
  [mod('proxy/wire/openai-chat.js').openAiChat, 'parse', 'adapter parse'],
  [mod('proxy/ledger.js').TitoLedger?.prototype, 'prepare', 'ledger.prepare'],
  [template, 'continueFrom', '  continueFrom'],
  [template, 'renderRaw', '    renders (+ primes)'],
  [template, 'encodeRaw', '    encode'],
  [template, 'drift', '    drift'],
  [template, 'streamParser', 'output parser made'],
  [mod('rollout/call-store.js').CallStore?.prototype, 'append', 'record'],
  [mod('proxy/wire/openai-chat.js').openAiChat, 'json', 'response body'],
  [mod('proxy/server.js').ServingProxy?.prototype, 'sendJson', 'response written'],
  [mod('proxy/json-depth.js'), 'checkArgumentsDepth', 'arguments depth'],
  [mod('proxy/sampling.js'), 'validateSampling', 'sampling check'],
  [mod('engine/output.js'), 'eventsToMessage', 'reply message'],
  [mod('proxy/request-features.js'), 'classifyCall', 'call role'],
  [mod('model/template-messages.js'), 'toTemplateMessages', 'template messages (+ primes)'],
  [mod('util/settled.js'), 'settle', 'settle (each call of it)'],
];
time(mod('proxy/generate.js'), 'drainTokens', 'token loop', true);
for (const [owner, name, label] of STAGES) time(owner, name, label);
time(mod('proxy/server.js').ServingProxy?.prototype, 'generate', 'generate (all of it)', true);

// Body's last byte → res.end(), per server (told apart by the port they listen on).
const bodyEnd = new WeakMap();
const emit = http.IncomingMessage.prototype.emit;
http.IncomingMessage.prototype.emit = function emitTimed(event, ...args) {
  if (event === 'end' && measuring) bodyEnd.set(this, process.hrtime.bigint());
  return emit.call(this, event, ...args);
};
const end = http.ServerResponse.prototype.end;
const inside = new Map();
http.ServerResponse.prototype.end = function endTimed(...args) {
  const out = end.apply(this, args);
  const t0 = bodyEnd.get(this.req);
  if (t0 !== undefined) note(inside.get(this.req.socket.localPort) ?? 'inside: other', t0);
  return out;
};

async function main() {
  const seconds = Number(process.argv[2] ?? 12);
  const proxy = await nullEngineProxy(core, core.loadChatModel(modelDir('qwen3'), { now: NOW }));
  const { server: bare, url } = await bareServer(await answerBytes(proxy));
  inside.set(bare.address().port, 'inside: bare server');
  inside.set(Number(new URL(proxy.openSession('port').baseUrl).port), 'inside: proxy');
  // The client is a process of its own (load.js loadApart), as a harness is: two rounds of a bare
  // phase and a proxy phase, each a quarter of `seconds`, after the conversations are grown.
  const endpoints = Array.from({ length: 256 }, (_, i) => [
    { kind: 'proxy', id: `p-${i}`, ...proxy.openSession(`p-${i}`) },
    { kind: 'bare', id: `b-${i}`, baseUrl: `${url}/s/b-${i}`, apiKey: 'k' },
  ]).flat();
  const phases = [0, 1].flatMap(() => [{ kinds: ['bare'], seconds: seconds / 4 }, { kinds: ['proxy'], seconds: seconds / 4 }]);
  const rt = await loadApart(endpoints, { rate: 50, turns: 8, phases }, { beforeLoop: async () => { measuring = true; } });
  measuring = false;
  if (missing.length) console.log(`not timed (no such method in core/dist any more): ${missing.join(', ')}`);
  console.log(`round trip p50: proxy ${pct(rt.proxy, 0.5).toFixed(3)} ms, bare ${pct(rt.bare, 0.5).toFixed(3)} ms (${rt.proxy.length} calls each); per stage, µs:`);
  for (const [label, xs] of samples) console.log(`${label.padEnd(24)} n=${String(xs.length).padStart(5)}  p50 ${pct(xs, 0.5).toFixed(1).padStart(7)}  p90 ${pct(xs, 0.9).toFixed(1).padStart(7)}`);
  const p50 = (label) => (samples.has(label) ? pct(samples.get(label), 0.5).toFixed(0) : 'na');
  console.log(`RESULT template-stages calls=${rt.proxy.length} proxy_p50_ms=${pct(rt.proxy, 0.5).toFixed(3)} bare_p50_ms=${pct(rt.bare, 0.5).toFixed(3)} inside_proxy_us=${p50('inside: proxy')} inside_bare_us=${p50('inside: bare server')} prepare_us=${p50('ledger.prepare')} record_us=${p50('record')}`);
  await proxy.stop();
  await new Promise((r) => { bare.closeAllConnections(); bare.close(r); });
}

main().catch((err) => { console.error(err); process.exit(1); });
