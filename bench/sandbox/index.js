'use strict';
// bench:sandbox — create + run `true` + destroy latency of each sandbox kind against a bare spawn of
// the same command in the same run, and sustained agentloop rollouts per minute (scripted engine,
// bubblewrap sandboxes) at the best concurrency, with the infrastructure-failure rate.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, dirname } = require('node:path');
const { localSandboxProvider, RolloutRunner } = require('../../core/dist/index.js');
const { startScriptedProxy } = require('../../core/dist/testing/index.js');
const { agentLoopHarness, AGENTLOOP_BIN } = require('../../plugins/harness-agentloop/dist/index.js');
const docker = require('../../plugins/sandbox-docker/dist/index.js');

const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function latency(provider, socketPath, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    const sb = await provider.create({ runId: 'bench-sandbox', rolloutId: `lat-${i}`, limits: {}, modelEndpoint: { socketPath, url: '' } });
    const r = await sb.exec(['true']);
    if (r.exitCode !== 0) throw new Error(`true failed in ${provider.name}: ${r.stderr}`);
    await sb.destroy();
    times.push(now() - t0);
  }
  return times;
}

const fileTask = (i) => ({
  id: `f${i}`, category: 'files', instruction: `Create n${i}.txt containing w${i}`,
  setup: async () => {},
  verify: async (ws) => { const ok = (await ws.exists(`n${i}.txt`)) && String(await ws.readFile(`n${i}.txt`)) === `w${i}`; return { reward: ok ? 1 : 0, pass: ok, details: '' }; },
});

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
  const p = await startScriptedProxy(({ sessionId, callIndex }) => {
    const i = Number(/(\d+)(\.retry\d+)?$/.exec(sessionId)[1]);
    return callIndex === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: `n${i}.txt`, content: `w${i}` } }] } : { text: 'done' };
  }, { runDir: join(dir, 'run') });
  const socketPath = join(dir, 'proxy.sock');
  await p.proxy.listenUnix(socketPath);

  const spawnTimes = [];
  for (let i = 0; i < 40; i++) { const t0 = now(); spawnSync('true'); spawnTimes.push(now() - t0); }
  const bwrap = await latency(localSandboxProvider(), socketPath, 40);
  const fallback = await latency(localSandboxProvider({ forceFallback: true, allowUnisolated: true, log: () => {} }), socketPath, 40);
  let dockerTimes = [NaN];
  let dockerd;
  if (!docker.dockerdMissing()) {
    dockerd = await docker.startDockerd();
    const image = await docker.buildSandboxImage(dockerd.dockerHost);
    dockerTimes = await latency(docker.dockerSandboxProvider({ socketPath: dockerd.socketPath, image }), socketPath, 15);
  }
  const line = (name, xs) => console.log(`${name.padEnd(22)} p50 ${pct(xs, 0.5).toFixed(1).padStart(7)} ms   p99 ${pct(xs, 0.99).toFixed(1).padStart(7)} ms`);
  console.log('create + exec `true` + destroy:');
  line('bare spawn of `true`', spawnTimes);
  line('local (bubblewrap)', bwrap);
  line('local (fallback)', fallback);
  line('docker', dockerTimes);

  // Sustained agentloop rollouts in bubblewrap sandboxes.
  let best = { concurrency: 0, perMin: 0, infra: 0, n: 0 };
  let seq = 0;
  for (const concurrency of [1, 2, 4, 8]) {
    const runner = new RolloutRunner({
      runId: 'bench-rollouts', proxy: p.proxy, socketPath, sandboxes: localSandboxProvider(), concurrency, timeoutMs: 60_000, infraRetries: 0,
      readOnlyPaths: [dirname(AGENTLOOP_BIN)],
    });
    const n = 6 * concurrency + 6;
    const jobs = Array.from({ length: n }, () => { const i = seq++; return { rolloutId: `ro-${i}`, step: 1, task: fileTask(i), harness: agentLoopHarness, harnessOptions: {} }; });
    const t0 = now();
    const reports = await runner.run(jobs);
    const minutes = (now() - t0) / 60000;
    const infra = reports.filter((r) => r.outcome === 'infra-error').length;
    const ok = reports.filter((r) => r.reward === 1).length;
    const perMin = reports.length / minutes;
    console.log(`agentloop rollouts, concurrency ${concurrency}: ${reports.length} in ${(minutes * 60).toFixed(1)} s = ${perMin.toFixed(0)}/min, ${ok} verified, ${infra} infra failures`);
    if (perMin > best.perMin) best = { concurrency, perMin, infra, n: reports.length };
  }
  await p.close();
  await dockerd?.stop();
  rmSync(dir, { recursive: true, force: true });
  console.log(`RESULT sandbox bwrap_p50_ms=${pct(bwrap, 0.5).toFixed(1)} bwrap_p99_ms=${pct(bwrap, 0.99).toFixed(1)} fallback_p50_ms=${pct(fallback, 0.5).toFixed(1)} spawn_p50_ms=${pct(spawnTimes, 0.5).toFixed(2)} docker_p50_ms=${pct(dockerTimes, 0.5).toFixed(1)} docker_p99_ms=${pct(dockerTimes, 0.99).toFixed(1)} rollouts_per_min=${best.perMin.toFixed(0)} best_concurrency=${best.concurrency} infra_fail_rate=${(best.infra / best.n).toFixed(3)}`);
}
main().catch((e) => { console.error(e); process.exit(1); });
