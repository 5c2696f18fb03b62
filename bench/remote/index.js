'use strict';
// bench:remote — the default config trained twice in one run, the same number of steps each:
// in process (engine and trainer share the embedded model), and through `clawgym trainer serve`
// over HTTP (the Tinker API: forward, forward_backward, optim_step, save_weights_for_sampler),
// the engine here loading the weights the service publishes after each step. The reference is
// the in-process run: the two Pass@1 gains (held-out, before the first step and after the last)
// must agree within 2 standard errors of their difference, and a remote step may cost at most
// 1.15× a local one (mean step seconds, rollouts included).
//
//   npm run bench:remote                         10 steps, 150 held-out tasks each (about 8 minutes on 2 cores)
//   BENCH_REMOTE_STEPS=10 BENCH_REMOTE_EVAL=100 npm run bench:remote
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { pass1, diff } = require('../../scripts/lib/pass1');

const repo = join(__dirname, '..', '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const out = mkdtempSync(join(tmpdir(), 'clawgym-bench-remote-'));
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

function cli(args, env, onLine) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repo, env: { ...process.env, BENCH_REMOTE_OUT: out, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout.on('data', (c) => { text += c; if (onLine) onLine(text); else process.stdout.write(c); });
  const exited = new Promise((ok) => child.on('exit', (code) => ok(code)));
  return { child, exited, text: () => text };
}

/** Pass@1 before and after, the gain with its standard error, and the mean step time of a run. */
function measure(runDir) {
  const events = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const evals = events.filter((e) => e.kind === 'eval');
  const steps = events.filter((e) => e.kind === 'step');
  const at = (e) => pass1(join(runDir, 'eval', `step-${e.step}`, 'eval.json'));
  const before = at(evals[0]);
  const after = at(evals[evals.length - 1]);
  const gain = diff(after, before);
  const mean = (f) => steps.reduce((s, e) => s + f(e.values), 0) / steps.length;
  // The update: the step without its rollouts (advantages, the trainer step, publishing, the checkpoint).
  return { before, after, gain: gain.d, se: gain.se, steps: steps.length, stepSeconds: mean((v) => v.seconds), updateSeconds: mean((v) => v.seconds - v['seconds/rollouts']) };
}

async function train(config, name, env = {}) {
  const run = cli(['run', '--config', join(__dirname, config), '--name', name], env);
  if ((await run.exited) !== 0) throw new Error(`clawgym run (${config}) failed`);
  return measure(join(out, name));
}

(async () => {
  const t0 = Date.now();
  console.log(`bench:remote: runs in ${out}`);
  const local = await train('local.config.ts', `local-${stamp}`);
  // The service: the default config's trainer (embedded, from the same cold start), its own process.
  const data = join(out, 'trainer-serve');
  let ready;
  const url = new Promise((ok) => { ready = ok; });
  const service = cli(['trainer', 'serve', '--config', join(repo, 'clawgym.config.ts'), '--port', '0', '--data', data], {}, (text) => {
    const m = /Tinker API\) on (http:\/\/\S+)/.exec(text);
    if (m) ready(m[1]);
  });
  const remote = await train('remote.config.ts', `remote-${stamp}`, { BENCH_REMOTE_URL: await url, BENCH_REMOTE_DATA: data });
  service.child.kill('SIGTERM');
  await service.exited;
  if (local.steps !== remote.steps) throw new Error(`the runs trained ${local.steps} and ${remote.steps} steps`);
  const se = Math.sqrt(local.se ** 2 + remote.se ** 2);
  const sigmas = se > 0 ? Math.abs(remote.gain - local.gain) / se : 0;
  const ratio = remote.stepSeconds / local.stepSeconds;
  const updateRatio = remote.updateSeconds / local.updateSeconds;
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  console.log(`local:  ${pct(local.before.p)} -> ${pct(local.after.p)} (n=${local.after.n}), gain ${(100 * local.gain).toFixed(1)} ± ${(100 * local.se).toFixed(1)} points, ${local.stepSeconds.toFixed(2)} s/step (update ${local.updateSeconds.toFixed(2)} s)`);
  console.log(`remote: ${pct(remote.before.p)} -> ${pct(remote.after.p)} (n=${remote.after.n}), gain ${(100 * remote.gain).toFixed(1)} ± ${(100 * remote.se).toFixed(1)} points, ${remote.stepSeconds.toFixed(2)} s/step (update ${remote.updateSeconds.toFixed(2)} s)`);
  console.log(`${local.steps} steps each, ${((Date.now() - t0) / 60000).toFixed(1)} min in all; gains differ by ${sigmas.toFixed(2)} standard errors (must be < 2); remote/local step time ${ratio.toFixed(3)} (must be <= 1.15)`);
  console.log(`RESULT remote pass1_gain_local=${local.gain.toFixed(3)} pass1_gain_remote=${remote.gain.toFixed(3)} gain_diff_sigmas=${sigmas.toFixed(2)} step_time_ratio=${ratio.toFixed(3)} update_time_ratio=${updateRatio.toFixed(3)} steps=${local.steps} held_out=${local.after.n}`);
})().catch((e) => { console.error(e); process.exit(1); });
