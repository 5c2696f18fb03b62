'use strict';
// The paper's three findings at laptop scale: three runs from the same Claude Code cold start
// (examples/findings.ts), differing only in the harnesses they train through, each evaluated
// (held-out Pass@1, temperature 1, test split) through agentloop and Claude Code before and
// after training.
//   (1) RL through Claude Code (a black box) improves Pass@1 measured through Claude Code;
//   (2) a mix-harness run reaches about what each single-harness run reaches on its own harness;
//   (3) a policy trained only through agentloop transfers to Claude Code less well than one
//       trained through Claude Code.
// Runs go to runs/<name>/; a run already finished is read, not rerun; a killed one is resumed.
//
// All three start from the same checkpoint, so their first evaluations are pooled into one
// estimate of the cold start (3 × the samples), which finding (1) is judged against. Runs are
// compared with each other at the last step both evaluated.
//
//   node scripts/findings.js                        run what is missing, then print the table
//   node scripts/findings.js --steps 60 [run...]    extend (or run) the named runs, default all, to 60 steps
//   node scripts/findings.js --table                only print the table of the runs there are
//   node scripts/findings.js --table --committed    the table of the runs in docs/results/findings-*
//   node scripts/findings.js --save                 copy the runs there into docs/results/findings-* (to commit)
const { spawn } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { pass1: pass1Of, pool, diff } = require('./lib/pass1');

const repo = join(__dirname, '..');
const RUNS = ['claude-code', 'agentloop-transfer', 'mix-harness'];
const HARNESSES = ['agentloop', 'claude-code'];
const args = process.argv.slice(2);
const stepsArg = args.includes('--steps') ? Number(args[args.indexOf('--steps') + 1]) : undefined;
if (stepsArg !== undefined && !(Number.isInteger(stepsArg) && stepsArg >= 1)) { console.error('--steps must be a whole number of at least 1'); process.exit(2); }
const named = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--steps');
for (const n of named) if (!RUNS.includes(n)) { console.error(`unknown run ${n}: the runs are ${RUNS.join(', ')}`); process.exit(2); }

// A run's directory, and where its evaluation of one step lies: runs/<name>/eval/step-<n>/eval.json
// as clawgym run writes it, or docs/results/findings-<name>/eval-step-<n>.json as committed.
const committed = args.includes('--committed');
const runDir = (name) => (committed ? join(repo, 'docs', 'results', `findings-${name}`) : join(repo, 'runs', name));
const evalFile = (name, step) => (committed ? join(runDir(name), `eval-step-${step}.json`) : join(runDir(name), 'eval', `step-${step}`, 'eval.json'));
const events = (name) => {
  const f = join(runDir(name), 'metrics.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
};
const evalSteps = (name) => events(name).filter((e) => e.kind === 'eval').map((e) => e.step);
const finished = (name, steps) => {
  const config = join(runDir(name), 'config.json');
  if (!existsSync(config)) return false;
  return evalSteps(name).includes(steps ?? JSON.parse(readFileSync(config, 'utf8')).run.steps);
};

// Run one config to its end; a SIGINT or SIGTERM to this script stops the run cleanly (it saves
// and can be resumed) and then this script.
function run(runArgs) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'run', ...runArgs], { cwd: repo, stdio: 'inherit' });
    const stop = () => child.kill('SIGINT');
    process.on('SIGINT', stop).on('SIGTERM', stop);
    child.on('exit', (code, signal) => { process.off('SIGINT', stop).off('SIGTERM', stop); done(code ?? (signal ? 1 : 0)); });
  });
}

async function main() {
  for (const name of named.length ? named : RUNS) {
    if (finished(name, stepsArg)) { console.log(`${name}: finished, read from ${runDir(name)}`); continue; }
    const resume = existsSync(join(runDir(name), 'state.json'));
    console.log(`${name}: ${resume ? 'resuming' : 'running'} examples/${name}.config.ts${stepsArg ? ` to step ${stepsArg}` : ''}`);
    const t0 = Date.now();
    const status = await run(['--config', join(repo, 'examples', `${name}.config.ts`), ...(resume ? ['--resume'] : []), ...(stepsArg ? ['--steps', String(stepsArg)] : [])]);
    if (status !== 0 || !finished(name, stepsArg)) { console.error(`${name}: clawgym run ${status ? `failed (exit ${status})` : 'stopped'}; rerun this script to resume it`); process.exit(1); }
    console.log(`${name}: ${((Date.now() - t0) / 60000).toFixed(1)} min`);
  }
}

// What a committed run keeps: its config, metrics, state and report, and each evaluation's eval.json.
function save() {
  for (const name of RUNS) {
    const from = runDir(name); const to = join(repo, 'docs', 'results', `findings-${name}`);
    if (!existsSync(join(from, 'metrics.jsonl'))) { console.log(`${name}: no run in ${from}, not saved`); continue; }
    mkdirSync(to, { recursive: true });
    for (const f of ['config.json', 'metrics.jsonl', 'state.json', 'report.html']) if (existsSync(join(from, f))) copyFileSync(join(from, f), join(to, f));
    for (const step of evalSteps(name)) copyFileSync(join(from, 'eval', `step-${step}`, 'eval.json'), join(to, `eval-step-${step}.json`));
    console.log(`${name}: saved to ${to}`);
  }
}

// Pass@1 through one harness at one evaluation, with its sample count and standard error.
const pass1 = (name, step, harness) => pass1Of(evalFile(name, step), harness);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const pts = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
const pm = (x) => `${pts(x.d)} ± ${(100 * x.se).toFixed(1)}`;

function table() {
  // The cold start: every run's first evaluation pooled (they all start from the same checkpoint).
  const cold = {};
  for (const h of HARNESSES) {
    const befores = RUNS.map((name) => evalSteps(name)[0]).map((s, i) => s === undefined ? undefined : pass1(RUNS[i], s, h)).filter(Boolean);
    if (befores.length) cold[h] = pool(befores);
  }
  // Every run's Pass@1 through each harness at each later evaluation: against its own step 0,
  // and against the pooled cold start.
  console.log('\n| run (trained through) | step | training minutes | through agentloop: own step 0 → now (gain ± SE) | through Claude Code: own step 0 → now (gain ± SE) |');
  console.log('|---|---|---|---|---|');
  const k = RUNS.filter((name) => evalSteps(name).length).length;
  console.log(`| cold start, pooled (step 0 of ${k} run${k === 1 ? '' : 's'}) | 0 | | ${HARNESSES.map((h) => (cold[h] ? `${pct(cold[h].p)} ± ${(100 * cold[h].se).toFixed(1)} (n=${cold[h].n})` : '')).join(' | ')} |`);
  for (const name of RUNS) {
    const all = events(name);
    const steps = evalSteps(name);
    if (steps.length < 2) { console.log(`| ${name} | not run | | | |`); continue; }
    for (const step of steps.slice(1)) {
      const cells = HARNESSES.map((h) => {
        const a = pass1(name, steps[0], h); const b = pass1(name, step, h);
        return a && b ? `${pct(a.p)} → ${pct(b.p)} (${pm(diff(b, a))}, n=${b.n})` : 'not evaluated';
      });
      // The steps' own time (rollouts and updates), not evaluations or a pause before a resume.
      const trained = all.filter((e) => e.kind === 'step' && e.step <= step).reduce((t, e) => t + e.values.seconds, 0);
      console.log(`| ${name} | ${step} | ${(trained / 60).toFixed(0)} | ${cells.join(' | ')} |`);
    }
  }

  // Each finding as a difference of Pass@1 with its standard error; "holds" at 2 or more.
  const verdict = (x) => (x.d >= 2 * x.se ? 'holds' : x.d > 0 ? 'in that direction, under 2 SE' : 'not shown');
  const show = (x) => `${pm(x)} points`;
  // Two runs compared at the last step both evaluated.
  const common = (a, b) => Math.max(...evalSteps(a).filter((s) => s > 0 && evalSteps(b).includes(s)));
  const out = {};
  const ccSteps = evalSteps('claude-code');
  if (ccSteps.length > 1 && cold['claude-code']) {
    const last = ccSteps[ccSteps.length - 1];
    const after = pass1('claude-code', last, 'claude-code');
    const g = diff(after, cold['claude-code']); const own = diff(after, pass1('claude-code', ccSteps[0], 'claude-code'));
    Object.assign(out, { f1_step: last, f1_gain: g.d, f1_sigmas: g.d / g.se, f1_gain_own: own.d, f1_sigmas_own: own.d / own.se });
    console.log(`\n(1) trained through Claude Code for ${last} steps, measured through Claude Code: ${show(g)} over the pooled cold start (${show(own)} over its own step 0) → ${verdict(g)}`);
  }
  const cc = common('claude-code', 'mix-harness'); const al = common('agentloop-transfer', 'mix-harness');
  if (Number.isFinite(cc) && Number.isFinite(al)) {
    // "About as far": the mix-harness run is not clearly (2 SE) below the single-harness run.
    const dc = diff(pass1('mix-harness', cc, 'claude-code'), pass1('claude-code', cc, 'claude-code'));
    const da = diff(pass1('mix-harness', al, 'agentloop'), pass1('agentloop-transfer', al, 'agentloop'));
    Object.assign(out, { f2_cc: dc.d, f2_cc_sigmas: dc.d / dc.se, f2_agentloop: da.d, f2_agentloop_sigmas: da.d / da.se });
    const about = (x) => (x.d >= -2 * x.se ? 'about as far or further' : 'clearly less far');
    console.log(`(2) mix-harness minus single-harness, each on its own harness: Claude Code ${show(dc)} at step ${cc} (${about(dc)}), agentloop ${show(da)} at step ${al} (${about(da)}) → ${dc.d >= -2 * dc.se && da.d >= -2 * da.se ? 'holds' : 'not shown'}`);
  }
  const both = common('claude-code', 'agentloop-transfer');
  if (Number.isFinite(both)) {
    // Both start from the same cold start: compare where they are, through Claude Code.
    const d = diff(pass1('claude-code', both, 'claude-code'), pass1('agentloop-transfer', both, 'claude-code'));
    Object.assign(out, { f3_step: both, f3_diff: d.d, f3_sigmas: d.d / d.se });
    console.log(`(3) through Claude Code at step ${both}, trained through Claude Code minus trained through agentloop: ${show(d)} → ${verdict(d)}`);
  }
  console.log(`RESULT findings ${Object.entries(out).map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(3)}`).join(' ')}`);
}

if (args.includes('--save') && committed) { console.error('--save copies runs/ into docs/results/; leave out --committed'); process.exit(2); }
if (args.includes('--save')) save();
else if (args.includes('--table')) table();
else main().then(table);
