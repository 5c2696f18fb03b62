'use strict';
// bench:sandbox — create + run `true` + destroy latency of each sandbox kind against its reference in
// the same run: a bare spawn of `true`, a bare `bwrap --unshare-all … true` (when bubblewrap is
// installed), and `docker run --rm <image> true` (when a private dockerd can run). The local
// sandbox is measured as configured by default (as root: a holder per sandbox, two started ahead,
// sandboxes one after the other with no pause: the pool refills meanwhile), with its three
// phases, and also without the pool (warmPool 0) and with a bubblewrap per command (holder: false). The Docker
// sandbox is measured with its warm pool warm, one sandbox every DOCKER_GAP_MS (a rate the pool
// refills at), and cold (warmPool 0); and cold on a remote host (an engine in its own network
// namespace) over TCP and over ssh:// (dial-stdio, and forwarded to the engine's socket), with one API request over ssh against dockerode's own
// transport. Then sustained agentloop rollouts per minute (scripted
// engine, local sandboxes) at the best concurrency, with the infrastructure-failure rate.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { loadavg, tmpdir } = require('node:os');
const { join, dirname } = require('node:path');
const { bubblewrapPath, localSandboxProvider, RolloutRunner } = require('../../core/dist/index.js');
const { startScriptedProxy } = require('../../core/dist/testing/index.js');
const { agentLoopHarness, AGENTLOOP_BIN } = require('../../plugins/harness-agentloop/dist/index.js');
const docker = require('../../plugins/sandbox-docker/dist/index.js');
const dockerTesting = require('../../plugins/sandbox-docker/dist/testing/index.js');

const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const now = () => Number(process.hrtime.bigint()) / 1e6;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const DOCKER_GAP_MS = Number(process.env.DOCKER_GAP_MS ?? 400);

let sandboxes = 0;
async function latency(provider, socketPath, n, gapMs = 0, phases) {
  const times = [];
  for (let i = 0; i < n; i++) {
    if (gapMs) await sleep(gapMs);
    const t0 = now();
    const sb = await provider.create({ runId: 'bench-sandbox', rolloutId: `lat-${sandboxes++}`, limits: {}, modelEndpoint: { socketPath, url: '' } });
    const t1 = now();
    const r = await sb.exec(['true']);
    if (r.exitCode !== 0) throw new Error(`true failed in ${provider.name}: ${r.stderr}`);
    const t2 = now();
    await sb.destroy();
    const t3 = now();
    times.push(t3 - t0);
    if (phases) { phases.create.push(t1 - t0); phases.exec.push(t2 - t1); phases.destroy.push(t3 - t2); }
  }
  return times;
}

/** `latency` after 3 untimed rounds (the spawner helper, and a pool's first fill), then closing the provider. */
async function local(provider, socketPath, n, phases) {
  await latency(provider, socketPath, 3);
  const runs = await latency(provider, socketPath, n, 0, phases);
  await provider.close();
  return runs;
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

  const timed = (n, f) => { const xs = []; for (let i = 0; i < n; i++) { const t0 = now(); f(); xs.push(now() - t0); } return xs; };
  const spawnTimes = timed(40, () => spawnSync('true'));
  const bwrapBin = bubblewrapPath();
  // The reference the issue names: bubblewrap alone, every namespace unshared, nothing of ours.
  const bareBwrap = bwrapBin ? timed(40, () => spawnSync(bwrapBin, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', 'true'])) : [NaN];
  const load1 = loadavg()[0];
  const phases = { create: [], exec: [], destroy: [] };
  const localDefault = localSandboxProvider();
  const held = await localDefault.usesHolder();
  const localTimes = await local(localDefault, socketPath, 40, phases);
  const bareAfter = bwrapBin ? timed(40, () => spawnSync(bwrapBin, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', 'true'])) : [NaN];
  bareBwrap.push(...bareAfter); // the reference before and after, against drifting load
  const noPool = held ? await local(localSandboxProvider({ warmPool: 0 }), socketPath, 40) : [NaN];
  const perCommand = bwrapBin ? await local(localSandboxProvider({ holder: false }), socketPath, 20) : [NaN];
  const fallback = await latency(localSandboxProvider({ forceFallback: true, allowUnisolated: true, log: () => {} }), socketPath, 40);
  let dockerWarm = [NaN];
  let dockerCold = [NaN];
  let dockerRun = [NaN];
  let dockerd;
  if (!dockerTesting.dockerdMissing()) {
    dockerd = await dockerTesting.startDockerd();
    const image = await dockerTesting.buildSandboxImage(dockerd.dockerHost);
    const warm = docker.dockerSandboxProvider({ socketPath: dockerd.socketPath, image, warmPool: 2 });
    await latency(warm, socketPath, 2, DOCKER_GAP_MS); // the first one is cold and starts the pool
    dockerWarm = await latency(warm, socketPath, 20, DOCKER_GAP_MS);
    await warm.close();
    dockerCold = await latency(docker.dockerSandboxProvider({ socketPath: dockerd.socketPath, image, warmPool: 0 }), socketPath, 10);
    dockerRun = timed(10, () => {
      const r = spawnSync('docker', ['-H', dockerd.dockerHost, 'run', '--rm', '--network', 'none', image, 'true']);
      if (r.status !== 0) throw new Error(`docker run failed: ${r.stderr}`);
    });
  }
  // A remote host, as the provider reaches one: an engine in a network namespace of its own,
  // over plain TCP and over ssh:// (an sshd in the same namespace), workspace by the archive API
  // and model by the exec tunnel; cold (warmPool 0), against the local engine cold above. Plus
  // one API request (/_ping) over ssh: the provider's kept channels against dockerode's own
  // transport (a login and a dial-stdio process per request).
  let tcpCold = [NaN];
  let sshCold = [NaN];
  let sshFwdCold = [NaN];
  let sshPingAgent = [NaN];
  let sshPingDockerode = [NaN];
  let remote;
  if (dockerd && !dockerTesting.netnsMissing()) {
    const net = dockerTesting.makeTestNetns(0);
    try {
      const engine = await dockerTesting.startDockerd({ netns: net.name, tcp: `${net.nsIp}:2375` });
      remote = { net, engine };
      const image = await dockerTesting.buildSandboxImage(engine.dockerHost);
      const tcp = docker.dockerSandboxProvider({ hosts: [`tcp://${net.nsIp}:2375`], image, warmPool: 0 });
      await latency(tcp, socketPath, 2);
      tcpCold = await latency(tcp, socketPath, 10);
      await tcp.close();
      if (!dockerTesting.sshdMissing()) {
        const sshd = await dockerTesting.startTestSshd(net, engine.dockerHost);
        remote.sshd = sshd;
        const host = { url: sshd.url, sshKey: sshd.clientKey, sshKnownHosts: sshd.knownHosts };
        const ssh = docker.dockerSandboxProvider({ hosts: [host], image, warmPool: 0 });
        await latency(ssh, socketPath, 2);
        sshCold = await latency(ssh, socketPath, 10);
        const ping = async (d, n) => { const xs = []; for (let i = 0; i < n; i++) { const t0 = now(); await d.ping(); xs.push(now() - t0); } return xs; };
        sshPingAgent = await ping(ssh.docker, 20);
        await ssh.close();
        // The same host with sshDockerSocket: channels forwarded to the engine's socket, no dial-stdio.
        const fwd = docker.dockerSandboxProvider({ hosts: [{ ...host, sshDockerSocket: engine.socketPath }], image, warmPool: 0 });
        await latency(fwd, socketPath, 2);
        sshFwdCold = await latency(fwd, socketPath, 10);
        await fwd.close();
        const Docker = require('dockerode');
        const { readFileSync } = require('node:fs');
        const plain = new Docker({ protocol: 'ssh', host: net.nsIp, port: 22, username: 'root', sshOptions: { privateKey: readFileSync(sshd.clientKey) } });
        sshPingDockerode = await ping(plain, 20);
      }
    } catch (err) {
      console.log(`remote host figures skipped: ${err.message}`);
    }
  }

  const line = (name, xs) => console.log(`${name.padEnd(34)} p50 ${pct(xs, 0.5).toFixed(1).padStart(7)} ms   p99 ${pct(xs, 0.99).toFixed(1).padStart(7)} ms`);
  console.log('create + exec `true` + destroy:');
  line('bare spawn of `true`', spawnTimes);
  line('bare bwrap --unshare-all true', bareBwrap);
  line(bwrapBin ? `local (bubblewrap${held ? ', holder, pool of 2' : ''})` : 'local (no bubblewrap here)', localTimes);
  for (const k of ['create', 'exec', 'destroy']) line(`  of which ${k}`, phases[k]);
  line('local, holder, no pool', noPool);
  line('local, a bubblewrap per command', perCommand);
  line('local (fallback)', fallback);
  line(`docker, warm pool (1 per ${DOCKER_GAP_MS} ms)`, dockerWarm);
  line('docker, no pool', dockerCold);
  line('docker run --rm <image> true', dockerRun);
  line('docker, remote host over tcp, no pool', tcpCold);
  line('docker, remote host over ssh, no pool', sshCold);
  line('  the same, sshDockerSocket', sshFwdCold);
  line('  /_ping over ssh, kept channels', sshPingAgent);
  line("  /_ping over ssh, dockerode's transport", sshPingDockerode);

  // Sustained agentloop rollouts in bubblewrap sandboxes.
  let best = { concurrency: 0, perMin: 0, infra: 0, n: 0 };
  let seq = 0;
  for (const concurrency of [1, 2, 4, 8]) {
    const sandboxes = localSandboxProvider();
    const runner = new RolloutRunner({
      runId: 'bench-rollouts', proxy: p.proxy, socketPath, sandboxes, concurrency, timeoutMs: 60_000, infraRetries: 0,
      readOnlyPaths: [dirname(AGENTLOOP_BIN)],
    });
    const n = 6 * concurrency + 6;
    const jobs = Array.from({ length: n }, () => { const i = seq++; return { rolloutId: `ro-${i}`, step: 1, task: fileTask(i), harness: agentLoopHarness, harnessOptions: {} }; });
    const t0 = now();
    const reports = await runner.run(jobs);
    const minutes = (now() - t0) / 60000;
    await sandboxes.close();
    const infra = reports.filter((r) => r.outcome === 'infra-error').length;
    const ok = reports.filter((r) => r.reward === 1).length;
    const perMin = reports.length / minutes;
    console.log(`agentloop rollouts, concurrency ${concurrency}: ${reports.length} in ${(minutes * 60).toFixed(1)} s = ${perMin.toFixed(0)}/min, ${ok} verified, ${infra} infra failures`);
    if (perMin > best.perMin) best = { concurrency, perMin, infra, n: reports.length };
  }
  await p.close();
  await remote?.sshd?.stop();
  await remote?.engine.stop();
  remote?.net.remove();
  await dockerd?.stop();
  rmSync(dir, { recursive: true, force: true });
  const p50 = (xs) => pct(xs, 0.5);
  const localKey = bwrapBin ? 'bwrap' : 'local_nobwrap';
  const f = (xs) => p50(xs).toFixed(1);
  console.log(`RESULT sandbox ${localKey}_p50_ms=${f(localTimes)} ${localKey}_p99_ms=${pct(localTimes, 0.99).toFixed(1)} bare_bwrap_p50_ms=${f(bareBwrap)} local_minus_bare_ms=${(p50(localTimes) - p50(bareBwrap)).toFixed(1)} ${localKey}_create_p50_ms=${f(phases.create)} ${localKey}_exec_p50_ms=${f(phases.exec)} ${localKey}_destroy_p50_ms=${f(phases.destroy)} holder=${held} ${localKey}_nopool_p50_ms=${f(noPool)} ${localKey}_per_command_p50_ms=${f(perCommand)} load1=${load1.toFixed(1)} fallback_p50_ms=${p50(fallback).toFixed(1)} spawn_p50_ms=${p50(spawnTimes).toFixed(2)} docker_p50_ms=${p50(dockerWarm).toFixed(1)} docker_p99_ms=${pct(dockerWarm, 0.99).toFixed(1)} docker_nopool_p50_ms=${p50(dockerCold).toFixed(1)} docker_run_p50_ms=${p50(dockerRun).toFixed(1)} docker_vs_run=${(p50(dockerWarm) / p50(dockerRun)).toFixed(2)} docker_tcp_nopool_p50_ms=${f(tcpCold)} docker_ssh_nopool_p50_ms=${f(sshCold)} remote_tcp_vs_local=${(p50(tcpCold) / p50(dockerCold)).toFixed(2)} ssh_vs_tcp=${(p50(sshCold) / p50(tcpCold)).toFixed(2)} docker_ssh_socket_nopool_p50_ms=${f(sshFwdCold)} ssh_socket_vs_tcp=${(p50(sshFwdCold) / p50(tcpCold)).toFixed(2)} ssh_ping_p50_ms=${p50(sshPingAgent).toFixed(2)} ssh_ping_dockerode_p50_ms=${f(sshPingDockerode)} rollouts_per_min=${best.perMin.toFixed(0)} best_concurrency=${best.concurrency} infra_fail_rate=${(best.infra / best.n).toFixed(3)}`);
}
main().catch((e) => { console.error(e); process.exit(1); });
