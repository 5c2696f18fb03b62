'use strict';
// bench:harness-overhead — rollouts per minute through each real CLI with an instant scripted
// model, bare (the CLI started here, pointed straight at a scripted model server: no sandbox,
// proxy, records or grading) against ClawGym (`clawgym eval --engine oracle`: sandbox, proxy,
// records, grading), at concurrency 1 and 2, in pairs whose order alternates, in one run. Both
// sides play the same two calls: write a file with the CLI's own write tool, then "Done.".
//   npm run bench:harness-overhead [-- --rollouts N --pairs P --harnesses claude-code,codex]
// Env: BENCH_HO_ROLLOUTS (default 6 per side and concurrency), BENCH_HO_PAIRS (2), BENCH_HO_HARNESSES
// (default: every real harness the install script knows, core's REAL_HARNESSES, that is installed).
// The ClawGym side runs under a child subreaper and counts the processes it left behind (zombies=).
// Ends with
//   RESULT harness-overhead harnesses=N min_ratio_c1=… min_ratio_c2=… zombies=… <harness>_c1=… <harness>_c2=…
//     startup_ms=… min_rollouts_ratio_c1=… min_rollouts_ratio_c2=… <harness>_c2_rollouts=… [failed=a,b]
// (ratios: ClawGym's rollouts per minute over the bare CLI's, for the whole `clawgym eval` command;
// the `rollouts` ratios leave out its start-up, `startup_ms`, which a command pays once however many
// rollouts follow: with the default 6 rollouts it weighs as much as a few of them, over a training
// run's thousands it is nothing; a harness's dashes read as underscores).
const { spawn } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, readFileSync, readdirSync, rmSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');

const repo = join(__dirname, '..', '..');
const { installedHarness, installedHarnessOptions, REAL_HARNESSES } = require(join(repo, 'core', 'dist', 'testing', 'harnesses.js'));
const { recordingSandbox } = require(join(repo, 'core', 'dist', 'testing', 'recording-sandbox.js'));
const { scriptedServer } = require('./scripted-model');

const arg = (name, env, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : process.env[env] ?? dflt;
};
const ROLLOUTS = Number(arg('rollouts', 'BENCH_HO_ROLLOUTS', '6'));
const PAIRS = Number(arg('pairs', 'BENCH_HO_PAIRS', '2'));
/**
 * Every real harness the install script knows (core's REAL_HARNESSES, the list CI installs),
 * played by its plugin, plugins/harness-<name>. One that is not installed, or whose plugin plays
 * no oracle, is named and left out; `--harnesses` picks some.
 */
const pluginDir = (name) => join(repo, 'plugins', `harness-${name}`, 'dist', 'index.js');
const ASKED = arg('harnesses', 'BENCH_HO_HARNESSES', REAL_HARNESSES.join(',')).split(',').filter(Boolean);
const LEFT_OUT = [];
const HARNESSES = ASKED.filter((h) => {
  const cli = installedHarness(h);
  if ('missing' in cli) { LEFT_OUT.push(`${h} (${cli.missing})`); return false; }
  if (!existsSync(pluginDir(h))) { LEFT_OUT.push(`${h} (no built plugin at ${pluginDir(h)}: npm run build)`); return false; }
  if (typeof harnessOf(h).oracleCall !== 'function') { LEFT_OUT.push(`${h} (its plugin plays no oracle: no oracleCall)`); return false; }
  return true;
});

/** The harness object a plugin package exports. */
function harnessOf(name) {
  const mod = require(pluginDir(name));
  return Object.values(mod).find((v) => v && typeof v === 'object' && v.name === name && typeof v.run === 'function');
}

// ---- the bare side: a scripted model server speaking the CLI's format (scripted-model.js), and the CLI started here.

/** How the plugin starts the CLI: its files, argv and environment, from a recording sandbox. */
async function invocationOf(harness, options, baseUrl) {
  const sandbox = recordingSandbox();
  await harness.run({ sandbox, endpoint: { baseUrl, apiKey: 'bench-key', model: 'policy' }, instruction: 'Create out.txt containing hi', timeoutMs: 120_000, signal: new AbortController().signal, options });
  const run = sandbox.execs[sandbox.execs.length - 1];
  await sandbox.destroy();
  return { files: [...sandbox.files], argv: run.argv, env: run.options.env ?? {}, home: sandbox.homePath, workspace: sandbox.workspacePath };
}

/** One bare rollout: a fresh HOME and workspace, the CLI run there; resolves with its wall ms. */
function bareRollout(inv, root, i) {
  const dir = join(root, `b${i}`);
  const swap = (s) => s.split(inv.home).join(join(dir, 'home')).split(inv.workspace).join(join(dir, 'workspace'));
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  mkdirSync(join(dir, 'home', 'tmp'), { recursive: true });
  for (const [path, text] of inv.files) { mkdirSync(dirname(swap(path)), { recursive: true }); writeFileSync(swap(path), swap(text)); }
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8' };
  for (const [k, v] of Object.entries(inv.env)) env[k] = swap(String(v));
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(inv.argv[0], inv.argv.slice(1).map(swap), { cwd: join(dir, 'workspace'), env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err = (err + d).slice(-2000); });
    child.on('exit', (code) => {
      const ok = code === 0 && existsSync(join(dir, 'workspace', 'out.txt'));
      rmSync(dir, { recursive: true, force: true });
      if (ok) resolve(Date.now() - t0); else reject(new Error(`bare rollout exited ${code} without out.txt: ${err}`));
    });
  });
}

/** `n` rollouts, `c` at a time; resolves with the whole wall ms. */
async function pool(n, c, one) {
  const t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: c }, async () => { while (next < n) await one(next++); }));
  return Date.now() - t0;
}

// ---- the ClawGym side: `clawgym eval --engine oracle` under a child subreaper.

const SUBREAPER = String.raw`
syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl: $!\n";
my $pid = fork(); if ($pid == 0) { exec @ARGV or die "exec: $!\n" }
waitpid($pid, 0); my $rc = $? >> 8; select(undef, undef, undef, 0.5);
opendir(my $d, '/proc') or die; my $n = 0;
for my $p (grep { /^\d+$/ } readdir $d) { open(my $s, '<', "/proc/$p/stat") or next; my $l = <$s>;
  my @f = split / /, substr($l, rindex($l, ')') + 2); if ($f[1] == $$) { $n++; kill 'KILL', $p } }
1 while waitpid(-1, 0) > 0; print STDERR "ORPHANS $n\n"; exit $rc;`;

function clawgymProject(name, options) {
  const dir = mkdtempSync(join(tmpdir(), `bench-ho-${name}-`));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"name":"bench-harness-overhead","private":true}');
  writeFileSync(join(dir, 'clawgym.config.mjs'), `export default {
  harnesses: [${JSON.stringify({ use: name, options })}],
  tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
  run: { outDir: ${JSON.stringify(join(dir, 'runs'))}, rolloutTimeoutMs: 300000 },
};\n`);
  return dir;
}

/**
 * One `clawgym eval` of `n` rollouts at concurrency `c`: wall ms, split at the line it prints once
 * everything is ready ("evaluating …"): its start-up (Node, the config, the preflight checks, the
 * plugins, the run lock), paid once per command, and the rollouts (proxy, sandboxes, harness
 * runs, grading, teardown); its rollouts' phases; the orphans it left.
 */
function clawgymRun(dir, n, c, tag) {
  const t0 = Date.now();
  const child = spawn('/usr/bin/perl', ['-e', SUBREAPER, process.execPath, join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', 'oracle', '--limit', String(n), '--concurrency', String(c), '--name', tag, '--json'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let readyAt;
  child.stderr.on('data', (d) => { stderr += d; if (readyAt === undefined && /^evaluating /m.test(stderr)) readyAt = Date.now(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 1_800_000);
  return new Promise((resolve, reject) => child.on('close', (status) => {
    clearTimeout(timer);
    const wall = Date.now() - t0;
    const orphans = Number(/ORPHANS (\d+)/.exec(stderr)?.[1] ?? NaN);
    if (status !== 0) return reject(new Error(`clawgym eval failed (exit ${status}): ${stderr.slice(-2000)}`));
    const evalJson = JSON.parse(readFileSync(join(dir, 'runs', tag, 'eval.json'), 'utf8'));
    const failed = evalJson.rollouts.filter((x) => !x.pass);
    if (failed.length) return reject(new Error(`clawgym eval: ${failed.length} rollout(s) did not pass: ${failed[0].details}`));
    const startup = (readyAt ?? t0) - t0;
    resolve({ wall, startup, rolloutsWall: wall - startup, rollouts: evalJson.rollouts, orphans, proxyMs: proxyMsOf(join(dir, 'runs', tag, 'calls')) });
  }));
}

/**
 * The proxy's milliseconds per call, from the call records (request received to response ended:
 * parsing, rendering, the prefix ledger, the scripted engine's instant reply, the record written).
 */
function proxyMsOf(callsDir) {
  if (!existsSync(callsDir)) return [];
  const ms = [];
  for (const f of readdirSync(callsDir).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(callsDir, f), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const t = JSON.parse(line).timings;
      if (t) ms.push(t.finishedAt - t.receivedAt);
    }
  }
  return ms;
}

// ---- the run

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const perMin = (n, ms) => (60_000 * n) / ms;

async function benchHarness(name, root) {
  const harness = harnessOf(name);
  const options = installedHarnessOptions(name);
  const writeCall = harness.oracleCall({ name: 'write_file', arguments: { path: 'out.txt', content: 'hi' } });
  const server = await scriptedServer(writeCall);
  const inv = await invocationOf(harness, options, `http://127.0.0.1:${server.address().port}`);
  const project = clawgymProject(name, options);
  const out = { name, c1: [], c2: [], c1_rollouts: [], c2_rollouts: [], startupMs: [], phases: [], bareMs: [], proxyMs: [], orphans: 0 };
  let run = 0;
  try {
    for (let p = 0; p < PAIRS; p++) {
      for (const c of [1, 2]) {
        const sides = p % 2 === 0 ? ['bare', 'clawgym'] : ['clawgym', 'bare'];
        const rate = {};
        for (const side of sides) {
          if (side === 'bare') {
            let i = 0;
            const ms = await pool(ROLLOUTS, c, async () => { out.bareMs.push(await bareRollout(inv, root, `${run}-${i++}`)); });
            rate.bare = perMin(ROLLOUTS, ms);
          } else {
            const r = await clawgymRun(project, ROLLOUTS, c, `r${run}`);
            rate.clawgym = perMin(ROLLOUTS, r.wall);
            rate.rollouts = perMin(ROLLOUTS, r.rolloutsWall);
            out.startupMs.push(r.startup);
            out.orphans += r.orphans;
            out.phases.push(...r.rollouts.map((x) => ({ ...x.phases, durationMs: x.durationMs, calls: x.calls })));
            out.proxyMs.push(...r.proxyMs);
          }
        }
        run++;
        out[`c${c}`].push(rate.clawgym / rate.bare);
        out[`c${c}_rollouts`].push(rate.rollouts / rate.bare);
        console.log(`${name} pair ${p + 1} c=${c} (${sides.join(' then ')}): bare ${rate.bare.toFixed(1)}/min, clawgym ${rate.clawgym.toFixed(1)}/min, ratio ${(rate.clawgym / rate.bare).toFixed(3)}; without eval's start-up ${(rate.rollouts / rate.bare).toFixed(3)}`);
      }
    }
  } finally {
    server.close();
    rmSync(project, { recursive: true, force: true });
  }
  return out;
}

function explain(r) {
  const m = (k) => median(r.phases.map((x) => x[k] ?? 0));
  const dur = m('durationMs');
  const proxy = r.proxyMs.length ? median(r.proxyMs) : 0;
  const calls = m('calls');
  const known = m('sandboxMs') + m('setupMs') + m('harnessMs') + m('recordsMs') + m('verifyMs');
  console.log(`${r.name}: \`clawgym eval\` starts in ${median(r.startupMs)} ms (median; once per command: Node, config, preflight, plugins, run lock), then a rollout takes ${dur} ms through ClawGym (median) against ${median(r.bareMs)} ms bare. ClawGym's own part: sandbox ${m('sandboxMs')} ms, task setup ${m('setupMs')} ms, proxy ${proxy} ms a call × ${calls} calls (inside the harness's ${m('harnessMs')} ms, the CLI's own time the rest of it), records ${m('recordsMs')} ms, grading ${m('verifyMs')} ms, the rest (sandbox teardown) ${Math.max(0, dur - known)} ms; no tree (eval builds none)`);
}

async function main() {
  for (const l of LEFT_OUT) console.log(`left out: ${l}`);
  if (!HARNESSES.length) { console.error(`no CLI to measure: install one (scripts/install-harnesses.sh ${ASKED.join(' ')})`); process.exit(1); }
  console.log(`harness overhead: ${HARNESSES.join(', ')}; ${PAIRS} alternated pair(s) of ${ROLLOUTS} rollouts per side at concurrency 1 and 2`);
  const root = mkdtempSync(join(tmpdir(), 'bench-ho-bare-'));
  const results = [];
  const failed = [];
  try {
    for (const h of HARNESSES) {
      // One CLI that fails (bare or through ClawGym) is reported, and the others still measured.
      try { const r = await benchHarness(h, root); explain(r); results.push(r); } catch (e) { failed.push(h); console.log(`${h} FAILED: ${String(e.message ?? e).slice(0, 1500)}`); }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const fmt = (x) => x.toFixed(3);
  const key = (n) => n.replace(/-/g, '_'); // RESULT keys are word characters: claude-code reads claude_code
  const per = results.map((r) => `${key(r.name)}_c1=${fmt(median(r.c1))} ${key(r.name)}_c2=${fmt(median(r.c2))}`).join(' ');
  const min = (c) => fmt(Math.min(...results.map((r) => median(r[c]))));
  const startup = Math.round(median(results.flatMap((r) => r.startupMs)));
  const perRollouts = results.map((r) => `${key(r.name)}_c2_rollouts=${fmt(median(r.c2_rollouts))}`).join(' ');
  console.log(`RESULT harness-overhead harnesses=${results.length} min_ratio_c1=${min('c1')} min_ratio_c2=${min('c2')} zombies=${results.reduce((n, r) => n + r.orphans, 0)} ${per} startup_ms=${startup} min_rollouts_ratio_c1=${min('c1_rollouts')} min_rollouts_ratio_c2=${min('c2_rollouts')} ${perRollouts}${failed.length ? ` failed=${failed.join(',')}` : ''}`);
  if (failed.length) process.exitCode = 1;
}

main().catch((e) => { console.error(e); process.exit(1); });
