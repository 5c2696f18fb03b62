'use strict';
// bench/template/profile.js — where a proxied call's CPU goes under bench:template's open-loop
// load (256 sessions, 50 calls/s, Qwen3's template and tokenizer, null engine): a V8 sampling
// profile of the measured phase only (not start-up, not the growing), summed by function.
// `node bench/template/profile.js [seconds]`. The client runs in a process of its own (load.js
// `loadApart`, as in bench:template), so every sample here is the server's. Times are CPU samples
// per call, not latency (priming after a response is in them; see docs/templates.md for what
// counts at p50).
const { Session } = require('node:inspector');
const core = require('../../core/dist/index.js');
const { modelDir, NOW, nullEngineProxy, loadApart, pct } = require('./load.js');

async function main() {
  const seconds = Number(process.argv[2] ?? 12);
  const proxy = await nullEngineProxy(core, core.loadChatModel(modelDir('qwen3'), { now: NOW }));
  const endpoints = Array.from({ length: 256 }, (_, i) => ({ kind: 'proxy', id: `p-${i}`, ...proxy.openSession(`p-${i}`) }));
  const session = new Session();
  session.connect();
  const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (e, v) => (e ? reject(e) : resolve(v))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 25 });
  // The profile starts once the client has grown each conversation 8 calls deep (their first calls render in full).
  const { proxy: latencies } = await loadApart(endpoints, { rate: 50, seconds, turns: 8 }, { beforeLoop: () => post('Profiler.start') });
  const { profile } = await post('Profiler.stop');
  const n = latencies.length;
  const self = new Map();
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  for (let i = 0; i < profile.samples.length; i++) {
    const f = byId.get(profile.samples[i]).callFrame;
    if (f.functionName === '(idle)' || f.functionName === '(program)' || f.url.startsWith('node:inspector')) continue;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(core\/dist|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`${n} calls, p50 ${pct(latencies, 0.5).toFixed(3)} ms; server CPU ${(total / n).toFixed(0)} µs a call in all; self time per call:`);
  for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(t / n).toFixed(1).padStart(8)} µs  ${k}`);
  const inCore = [...self].filter(([k]) => k.includes('core/dist/')).reduce((a, [, t]) => a + t, 0);
  console.log(`RESULT template-profile calls=${n} p50_ms=${pct(latencies, 0.5).toFixed(3)} cpu_us_per_call=${(total / n).toFixed(0)} core_self_us_per_call=${(inCore / n).toFixed(0)}`);
  await proxy.stop();
}

main().catch((err) => { console.error(err); process.exit(1); });
