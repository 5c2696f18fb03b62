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
// estimate of the cold start (3 × the samples), which each run's end is also compared with.
//
//   node scripts/findings.js                        run what is missing, then print the table
//   node scripts/findings.js --table                only print the table of the runs there are
//   node scripts/findings.js --table --committed    the table of the runs in docs/results/findings-*
const { spawn } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { pass1: pass1Of, pool, diff } = require('./lib/pass1');

const repo = join(__dirname, '..');
const RUNS = ['claude-code', 'agentloop-transfer', 'mix-harness'];
const HARNESSES = ['agentloop', 'claude-code'];
// A run's directory, and where its evaluation of one step lies: runs/<name>/eval/step-<n>/eval.json
// as clawgym run writes it, or docs/results/findings-<name>/eval-step-<n>.json as committed.
const committed = process.argv.includes('--committed');
const runDir = (name) => (committed ? join(repo, 'docs', 'results', `findings-${name}`) : join(repo, 'runs', name));
const evalFile = (name, step) => (committed ? join(runDir(name), `eval-step-${step}.json`) : join(runDir(name), 'eval', `step-${step}`, 'eval.json'));
const events = (name) => {
  const f = join(runDir(name), 'metrics.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
};
const finished = (name) => {
  const config = join(runDir(name), 'config.json');
  if (!existsSync(config)) return false;
  const steps = JSON.parse(readFileSync(config, 'utf8')).run.steps;
  return events(name).some((e) => e.kind === 'eval' && e.step === steps);
};

// Run one config to its end; a SIGINT or SIGTERM to this script stops the run cleanly (it saves
// and can be resumed) and then this script.
function run(args) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'run', ...args], { cwd: repo, stdio: 'inherit' });
    const stop = () => child.kill('SIGINT');
    process.on('SIGINT', stop).on('SIGTERM', stop);
    child.on('exit', (code, signal) => { process.off('SIGINT', stop).off('SIGTERM', stop); done(code ?? (signal ? 1 : 0)); });
  });
}

async function main() {
  for (const name of RUNS) {
    if (finished(name)) { console.log(`${name}: finished, read from ${runDir(name)}`); continue; }
    const resume = existsSync(join(runDir(name), 'state.json'));
    console.log(`${name}: ${resume ? 'resuming' : 'running'} examples/${name}.config.ts`);
    const t0 = Date.now();
    const status = await run(['--config', join(repo, 'examples', `${name}.config.ts`), ...(resume ? ['--resume'] : [])]);
    if (status !== 0 || !finished(name)) { console.error(`${name}: clawgym run ${status ? `failed (exit ${status})` : 'stopped'}; rerun this script to resume it`); process.exit(1); }
    console.log(`${name}: ${((Date.now() - t0) / 60000).toFixed(1)} min`);
  }
}

(process.argv.includes('--table') ? Promise.resolve() : main()).then(table);

// Pass@1 through one harness at one evaluation, with its sample count and standard error.
const pass1 = (name, step, harness) => pass1Of(evalFile(name, step), harness);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const pts = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;

function table() {
  // Every run's Pass@1 through each harness, at its first and last evaluation.
  const at = {};
  console.log('\n| run (trained through) | steps | minutes | through agentloop: before → after (gain ± SE) | through Claude Code: before → after (gain ± SE) |');
  console.log('|---|---|---|---|---|');
  for (const name of RUNS) {
    const all = events(name);
    const ev = all.filter((e) => e.kind === 'eval');
    if (ev.length < 2) { console.log(`| ${name} | not run | | | |`); continue; }
    const first = ev[0].step; const last = ev[ev.length - 1].step;
    const cells = HARNESSES.map((h) => {
      const a = pass1(name, first, h); const b = pass1(name, last, h);
      if (!a || !b) return 'not evaluated';
      at[`${name}/${h}`] = { before: a, after: b };
      const g = diff(b, a);
      return `${pct(a.p)} → ${pct(b.p)} (${pts(g.d)} ± ${(100 * g.se).toFixed(1)}, n=${b.n})`;
    });
    console.log(`| ${name} | ${last} | ${((ev[ev.length - 1].time - all[0].time) / 60000).toFixed(0)} | ${cells.join(' | ')} |`);
  }
  // The cold start, every run's first evaluation pooled (they all start from the same checkpoint).
  const cold = {};
  for (const h of HARNESSES) {
    const befores = RUNS.map((name) => at[`${name}/${h}`]?.before).filter(Boolean);
    if (befores.length) cold[h] = pool(befores);
  }
  console.log(`| cold start, pooled (${RUNS.filter((name) => at[`${name}/claude-code`]).length} runs' step 0) | 0 | | ${HARNESSES.map((h) => (cold[h] ? `${pct(cold[h].p)} ± ${(100 * cold[h].se).toFixed(1)} (n=${cold[h].n})` : '')).join(' | ')} |`);

  // Each finding as a difference of Pass@1 with its standard error; "holds" at 2 or more.
  const verdict = (x) => (x.d >= 2 * x.se ? 'holds' : x.d > 0 ? 'in that direction, under 2 SE' : 'not shown');
  const show = (x) => `${pts(x.d)} ± ${(100 * x.se).toFixed(1)} points`;
  const out = {};
  const cc = at['claude-code/claude-code']; const al = at['agentloop-transfer/agentloop'];
  const mixCc = at['mix-harness/claude-code']; const mixAl = at['mix-harness/agentloop']; const alCc = at['agentloop-transfer/claude-code'];
  if (cc) {
    // Against the pooled cold start (three times the samples of the run's own step 0), and its own.
    const g = diff(cc.after, cold['claude-code']); const own = diff(cc.after, cc.before);
    out.f1_gain = g.d; out.f1_sigmas = g.d / g.se; out.f1_gain_own = own.d; out.f1_sigmas_own = own.d / own.se;
    console.log(`\n(1) trained through Claude Code, measured through Claude Code: ${show(g)} over the pooled cold start (${show(own)} over its own step 0) → ${verdict(g)}`);
  }
  if (cc && al && mixCc && mixAl) {
    // "About as far": the mix-harness run is not clearly (2 SE) below the single-harness run.
    const dc = diff(mixCc.after, cc.after); const da = diff(mixAl.after, al.after);
    out.f2_cc = dc.d; out.f2_agentloop = da.d;
    const about = (x) => (x.d >= -2 * x.se ? 'about as far or further' : 'clearly less far');
    console.log(`(2) mix-harness minus single-harness, each on its own harness: Claude Code ${show(dc)} (${about(dc)}), agentloop ${show(da)} (${about(da)}) → ${dc.d >= -2 * dc.se && da.d >= -2 * da.se ? 'holds' : 'not shown'}`);
  }
  if (cc && alCc) {
    // Both start from the same cold start: compare where they end, through Claude Code.
    const d = diff(cc.after, alCc.after);
    out.f3_diff = d.d; out.f3_sigmas = d.d / d.se;
    console.log(`(3) through Claude Code after training, trained through Claude Code minus trained through agentloop: ${show(d)} → ${verdict(d)}`);
  }
  console.log(`RESULT findings ${Object.entries(out).map(([k, v]) => `${k}=${v.toFixed(3)}`).join(' ')}`);
}
