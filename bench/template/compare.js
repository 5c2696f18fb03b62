'use strict';
// bench/template/compare.js — two builds of core under bench:template's open-loop load, in one
// process, with the bare node:http server beside them: `node bench/template/compare.js <dir>`
// compares the build in <dir> (a copy of core/dist made before a change: `cp -r core/dist
// core/dist-before`; keep it inside core/ so its requires resolve) with core/dist.
//
// Why: on this shared machine the p50 of one bench:template run moves by ±0.05 in ratio
// (±50–100 µs) from run to run, and even between two 6 s phases of one run, more than most
// single changes to the proxy gain. Here the two builds' calls alternate within the same phases,
// so the machine's drift hits both alike.
const { join, resolve } = require('node:path');

const root = join(__dirname, '..', '..');
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/template/compare.js <core build dir>   (e.g. core/dist-before, a copy of core/dist made before the change)');
  process.exit(2);
}
const before = require(join(resolve(dir), 'index.js'));
const after = require(join(root, 'core', 'dist', 'index.js'));
const { modelDir, NOW, nullEngineProxy, answerBytes, bareServer, conversation, openLoop, grow, pct, agent } = require('./load.js');

async function main() {
  const proxyOf = (lib, perToken) => nullEngineProxy(lib, lib.loadChatModel(modelDir('qwen3'), { now: NOW }), perToken);
  // PER_TOKEN_BEFORE=1: the build before takes its null engine's tokens one a step (a build older than TokenStep cannot take more).
  const proxies = { before: await proxyOf(before, process.env.PER_TOKEN_BEFORE === '1' || undefined), after: await proxyOf(after) };
  const { server: bare, url: bareUrl } = await bareServer(await answerBytes(proxies.before));
  // The two builds' sessions alternate in one open loop (256 sessions, 50 calls/s in all: the
  // bench's load), so each call of one build has a call of the other beside it in time; the bare
  // server runs its own phases in between, for the ratios (bench:template now alternates the bare
  // server's calls with the proxy's too; here the two builds' difference is the figure).
  const latencies = { before: [], after: [], bare: [] };
  const tagged = (k, call) => async () => { const t = await call(); latencies[k].push(t); return t; };
  const mixed = Array.from({ length: 256 }, (_, i) => {
    const k = i % 2 ? 'after' : 'before';
    return conversation((id) => proxies[k].openSession(id), `${k}-${i}`);
  });
  const bareCalls = Array.from({ length: 256 }, (_, i) => conversation((id) => ({ baseUrl: `${bareUrl}/s/${id}`, apiKey: 'k' }), `bare-${i}`));
  await grow(mixed, 8);
  await grow(bareCalls, 8);
  const measured = mixed.map((call, i) => tagged(i % 2 ? 'after' : 'before', call));
  const rounds = Number(process.env.ROUNDS ?? 3);
  for (let r = 0; r < rounds; r++) {
    latencies.bare.push(...await openLoop(bareCalls, 50, 6));
    await openLoop(measured, 50, 6);
    console.log(`  round ${r + 1}/${rounds}: p50 so far: before ${pct(latencies.before, 0.5).toFixed(3)} ms, after ${pct(latencies.after, 0.5).toFixed(3)} ms, bare ${pct(latencies.bare, 0.5).toFixed(3)} ms`);
  }
  const p50 = (k) => pct(latencies[k], 0.5);
  console.log(`RESULT template-compare p50_before_ms=${p50('before').toFixed(3)} p50_after_ms=${p50('after').toFixed(3)} p50_bare_ms=${p50('bare').toFixed(3)} ratio_before=${(p50('before') / p50('bare')).toFixed(2)} ratio_after=${(p50('after') / p50('bare')).toFixed(2)} after_minus_before_us=${((p50('after') - p50('before')) * 1000).toFixed(0)} calls_each=${latencies.after.length}`);
  await Promise.all(Object.values(proxies).map((p) => p.stop()));
  await new Promise((r) => { bare.closeAllConnections(); bare.close(r); });
  agent.destroy();
}

main().catch((err) => { console.error(err); process.exit(1); });
