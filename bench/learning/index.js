'use strict';
// bench:learning — the default config (root clawgym.config.ts: the shipped cold-start checkpoint,
// embedded engine and trainer, local sandboxes, agentloop, built-in tasks, GRPO) trained as
// `clawgym run` trains it. The reference is the same run's own starting point: held-out Pass@1
// (temperature 1, the test split) of the cold-start policy, measured before the first step, against
// the same evaluation after the last step, each with its standard error (scripts/lib/pass1.js).
// The run is kept in runs/bench-learning-<time>/ (metrics, records, report.html).
//
//   npm run bench:learning                  the default config as it is
//   BENCH_LEARNING_CONFIG=examples/x.config.ts npm run bench:learning
const { spawn } = require('node:child_process');
const { readFileSync, existsSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { pass1, diff } = require('../../scripts/lib/pass1');

const repo = join(__dirname, '..', '..');
const configFile = process.env.BENCH_LEARNING_CONFIG ? resolve(process.env.BENCH_LEARNING_CONFIG) : join(repo, 'clawgym.config.ts');
const name = `bench-learning-${new Date().toISOString().replace(/[:.]/g, '-')}`;

const t0 = Date.now();
const child = spawn(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'run', '--config', configFile, '--name', name], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (c) => { out += c; process.stdout.write(c); });
child.on('exit', (code) => {
  if (code !== 0) { console.error(`clawgym run failed (exit ${code})`); process.exit(1); }
  const minutes = (Date.now() - t0) / 60000;
  const runDir = /finished after step \d+: (.*)\n/.exec(out)?.[1];
  if (!runDir || !existsSync(join(runDir, 'metrics.jsonl'))) { console.error('no run directory in the output of clawgym run'); process.exit(1); }
  const events = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const evals = events.filter((e) => e.kind === 'eval');
  const steps = events.filter((e) => e.kind === 'step').length;
  const first = evals[0]; const last = evals[evals.length - 1];
  if (!first || first === last) { console.error('the run needs a held-out evaluation before and after training'); process.exit(1); }
  // Pass@1 and its standard error, from each evaluation's own file (n: scored held-out samples).
  const at = (step) => pass1(join(runDir, 'eval', `step-${step}`, 'eval.json'));
  const before = at(first.step); const after = at(last.step);
  const { p: p0, n: n0, se: se0 } = before; const { p: p1, n: n1, se: se1 } = after;
  const stderr = diff(after, before).se;
  const sigmas = stderr > 0 ? (p1 - p0) / stderr : 0;
  console.log(`held-out Pass@1 over steps: ${evals.map((e) => `${e.step}:${(100 * e.values.pass1).toFixed(1)}%`).join('  ')}`);
  console.log(`before ${(100 * p0).toFixed(1)}% ± ${(100 * se0).toFixed(1)} (n=${n0}), after ${(100 * p1).toFixed(1)}% ± ${(100 * se1).toFixed(1)} (n=${n1}); difference ${(100 * (p1 - p0)).toFixed(1)} points = ${sigmas.toFixed(1)} standard errors; ${steps} steps in ${minutes.toFixed(1)} min`);
  console.log(`report: ${join(runDir, 'report.html')}`);
  console.log(`RESULT learning pass1_before=${p0.toFixed(3)} pass1_after=${p1.toFixed(3)} gain_points=${(100 * (p1 - p0)).toFixed(1)} stderr=${stderr.toFixed(3)} sigmas=${sigmas.toFixed(1)} held_out=${Math.min(n0, n1)} steps=${steps} minutes=${minutes.toFixed(1)}`);
});
