'use strict';
// bench/template/compare.js — two builds of the prompt path under bench:template's open-loop load,
// with the bare node:http server beside them: `node bench/template/compare.js <dir>` compares the
// build in <dir> with the current one. <dir> is a copy made before a change of either core's
// build (`cp -r core/dist core/dist-before`: the proxy) or @clawgym/model-hf's
// (`cp -r plugins/model-hf/dist plugins/model-hf/dist-before`: tokenizer and templates); keep it
// beside the original so its requires resolve. The other package is the current build in both.
//
// Why: on this shared machine the p50 of one bench:template run moves by ±0.05 in ratio
// (±50–100 µs) from run to run, and even between two 6 s phases of one run, more than most
// single changes to the proxy gain. Here the two builds' calls alternate within the same phases,
// so the machine's drift hits both alike.
//
// What it resolves: two copies of one build read −1 to +19 µs apart (five runs of one process
// each, 600 calls a build). So each comparison runs twice, in a process of its own each, once
// with either build's proxy made first (in case the order matters; no effect of it stood out of
// that noise), and the figure is the mean of the two differences (both are printed).
//
// The client is a process of its own (load.js loadApart), as a harness is: work a proxy does
// after `res.end()` is not counted, as no harness waits for it.
//
// PER_TOKEN_BEFORE=1: the build in <dir> gets a null engine that yields one token a step (a build
// older than contracts/engine.ts TokenStep cannot take more). ROUNDS: measured rounds per order.
const { spawn } = require('node:child_process');
const { join, resolve } = require('node:path');

const root = join(__dirname, '..', '..');
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/template/compare.js <build dir>   (a copy of core/dist or plugins/model-hf/dist made before the change, e.g. core/dist-before)');
  process.exit(2);
}

/** One comparison in this process, the proxy of `first` ('before' or 'after') made first. */
async function compare(first) {
  const libs = {};
  const current = { ...require(join(root, 'core', 'dist', 'index.js')), ...require(join(root, 'plugins', 'model-hf', 'dist', 'index.js')) };
  // The copy replaces what its package exports; the other package stays the current build.
  for (const k of first === 'before' ? ['before', 'after'] : ['after', 'before']) libs[k] = k === 'before' ? { ...current, ...require(join(resolve(dir), 'index.js')) } : current;
  const { modelDir, NOW, nullEngineProxy, answerBytes, bareServer, loadApart, pct } = require('./load.js');
  const perToken = { before: process.env.PER_TOKEN_BEFORE === '1' || undefined, after: undefined };
  const proxies = {};
  for (const k of Object.keys(libs)) proxies[k] = await nullEngineProxy(libs[k], libs[k].loadChatModel(modelDir('qwen3'), { now: NOW }), perToken[k]);
  const { server: bare, url: bareUrl } = await bareServer(await answerBytes(proxies[first]));
  // The two builds' sessions alternate in one open loop (256 sessions, 50 calls/s in all: the
  // bench's load), so each call of one build has a call of the other beside it in time; the bare
  // server runs its own phases in between, for the ratios (bench:template alternates the bare
  // server's calls with the proxy's too; here the two builds' difference is the figure). The
  // client is a process of its own (load.js loadApart), as a harness is.
  const endpoints = [
    ...Array.from({ length: 256 }, (_, i) => {
      const k = i % 2 ? 'after' : 'before';
      return { kind: k, id: `${k}-${i}`, ...proxies[k].openSession(`${k}-${i}`) };
    }),
    ...Array.from({ length: 256 }, (_, i) => ({ kind: 'bare', id: `bare-${i}`, baseUrl: `${bareUrl}/s/bare-${i}`, apiKey: 'k' })),
  ];
  const rounds = Number(process.env.ROUNDS ?? 3);
  const phases = Array.from({ length: rounds }, () => [{ kinds: ['bare'], seconds: 6 }, { kinds: ['before', 'after'], seconds: 6 }]).flat();
  const latencies = await loadApart(endpoints, { rate: 50, turns: 8, phases }, {
    onPhase: (i, sofar) => {
      if (i % 2 === 1) console.error(`  ${first} made first, round ${(i + 1) / 2}/${rounds}: p50 so far: before ${pct(sofar.before, 0.5).toFixed(3)} ms, after ${pct(sofar.after, 0.5).toFixed(3)} ms, bare ${pct(sofar.bare, 0.5).toFixed(3)} ms`);
    },
  });
  await Promise.all(Object.values(proxies).map((p) => p.stop()));
  await new Promise((r) => { bare.closeAllConnections(); bare.close(r); });
  const p50 = (k) => pct(latencies[k], 0.5);
  return { before: p50('before'), after: p50('after'), bare: p50('bare'), n: latencies.after.length };
}

function inChild(first) {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [__filename, dir, '--first', first], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? ok(JSON.parse(out)) : fail(new Error(`the comparison with ${first} made first exited with ${code}`))));
  });
}

async function main() {
  const at = process.argv.indexOf('--first');
  if (at > 0) { process.stdout.write(JSON.stringify(await compare(process.argv[at + 1]))); return; }
  const runs = [await inChild('before'), await inChild('after')];
  const mean = (f) => runs.reduce((s, r) => s + f(r), 0) / runs.length;
  const diff = (r) => (r.after - r.before) * 1000;
  console.log(`after − before at p50: ${diff(runs[0]).toFixed(0)} µs with the build before made first, ${diff(runs[1]).toFixed(0)} µs with core/dist made first`);
  console.log(`RESULT template-compare p50_before_ms=${mean((r) => r.before).toFixed(3)} p50_after_ms=${mean((r) => r.after).toFixed(3)} p50_bare_ms=${mean((r) => r.bare).toFixed(3)} ratio_before=${mean((r) => r.before / r.bare).toFixed(2)} ratio_after=${mean((r) => r.after / r.bare).toFixed(2)} after_minus_before_us=${mean(diff).toFixed(0)} before_first_us=${diff(runs[0]).toFixed(0)} after_first_us=${diff(runs[1]).toFixed(0)} calls_each=${runs[0].n + runs[1].n}`);
}

main().catch((err) => { console.error(err); process.exit(1); });
