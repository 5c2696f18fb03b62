'use strict';
// bench:faults cases on who owns a run and what it may write: one process a run folder (the
// lock), the Node < 22 launcher's signals and lifetime, a run folder that stops taking writes,
// answers that could not be recorded, gc of another project's leftovers.
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');

const repo = resolve(__dirname, '..', '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const jsonl = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } }) : []);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

/** A `clawgym` child on `node` (default: this Node): output, exit, and whether it is still running. */
function clawgym(dir, args, node = process.execPath) {
  const child = spawn(node, [bin, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return { child, exited, out: () => out };
}
/** Resolves true when `test()` holds (polled every 20 ms), false after `ms`. */
async function until(test, ms) {
  const end = Date.now() + ms;
  while (!test()) { if (Date.now() > end) return false; await sleep(20); }
  return true;
}
/** Exit within `ms`, or 'hung' (then killed). */
async function exitWithin(run, ms) {
  const r = await Promise.race([run.exited, sleep(ms).then(() => 'hung')]);
  if (r === 'hung') { run.child.kill('SIGKILL'); await run.exited; }
  return r;
}
function steps(runDir) {
  const m = jsonl(join(runDir, 'metrics.jsonl'));
  const s = m.filter((e) => e.kind === 'step');
  return { steps: s.map((e) => e.step).join(','), infra: s.reduce((a, e) => a + (e.values.infra ?? 0), 0) };
}
const stateOf = (runDir) => { try { return JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')); } catch { return undefined; } };

module.exports = function ownershipCases({ project, tally, log, runConfig }) {
  const threeSteps = runConfig.replace('steps: 2,', 'steps: 3,');

  async function lock() {
    log('lock: two `clawgym run` at once on one folder; `run --resume` beside a live run');
    {
      const dir = project(runConfig);
      const a = clawgym(dir, ['run']);
      const b = clawgym(dir, ['run']);
      const [ra, rb] = await Promise.all([exitWithin(a, 240_000), exitWithin(b, 240_000)]);
      const refused = [[ra, a], [rb, b]].filter(([r, c]) => r.code === 1 && c.out().includes('CLAWGYM_RUN_LOCKED'));
      const ran = [ra, rb].filter((r) => r.code === 0);
      const s = steps(join(dir, 'runs', 'tiny'));
      tally('two runs on one folder: one refuses, the other trains with 0 infra', { lock_violations: refused.length === 1 && ran.length === 1 && s.steps === '1,2' && s.infra === 0 ? 0 : 1, hangs: [ra, rb].filter((r) => r === 'hung').length });
    }
    {
      const dir = project(threeSteps);
      const runDir = join(dir, 'runs', 'tiny');
      const live = clawgym(dir, ['run']);
      await until(() => (stateOf(runDir)?.step ?? 0) >= 1, 120_000);
      const resume = clawgym(dir, ['run', '--resume']);
      const r = await exitWithin(resume, 15_000);
      const l = await exitWithin(live, 240_000);
      const s = steps(runDir);
      const ok = r.code === 1 && resume.out().includes('CLAWGYM_RUN_LOCKED') && l.code === 0 && s.steps === '1,2,3';
      tally('run --resume beside a live run is refused; the live run keeps each step once', { lock_violations: ok ? 0 : 1, hangs: (r === 'hung' ? 1 : 0) + (l === 'hung' ? 1 : 0) });
    }
  }

  async function launcher() {
    const old = '/usr/bin/node';
    const major = existsSync(old) ? Number(spawnSync(old, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) : 0;
    if (!(major > 0 && major < 22)) { log(`launcher: skipped (${old} is not a Node below 22)`); return; }
    log(`launcher on Node ${major}: SIGINT to its PID reaches serve; kill -9 of it takes the child along`);
    const dir = project('{ run: { outDir: "runs" } }');
    const children = (pid) => { try { return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; } };
    for (const how of ['SIGINT', 'SIGKILL']) {
      const s = clawgym(dir, ['serve', '--engine', 'scripted', '--port', '0', '--name', `launcher-${how}`], old);
      if (!await until(() => s.out().includes('Press Ctrl-C'), 60_000)) { tally(`launcher ${how}: serve did not start`, { crashes: 1 }); s.child.kill('SIGKILL'); continue; }
      const [child] = children(s.child.pid);
      s.child.kill(how);
      const r = await exitWithin(s, 15_000);
      const gone = await until(() => !alive(child), 10_000);
      if (!gone) process.kill(child, 'SIGKILL');
      if (how === 'SIGINT') tally('SIGINT to the launcher: serve stops cleanly with its summary', { crashes: r.code === 0 && s.out().includes('stopped.') ? 0 : 1, hangs: r === 'hung' ? 1 : 0, orphans: gone ? 0 : 1 });
      else tally('kill -9 of the launcher: its child is gone within 10 s', { orphans: gone ? 0 : 1 });
    }
  }

  async function unwritable() {
    if (process.getuid?.() !== 0) { log('run folder faults: skipped (mounting a read-only or full disk needs root)'); return; }
    log('run folder faults: read-only and full mid-step, then --resume');
    const sh = (...a) => spawnSync(a[0], a.slice(1), { encoding: 'utf8' });
    const cases = {
      'read-only': { setup: (runs) => { mkdirSync(`${runs}.disk`); sh('mount', '--bind', `${runs}.disk`, runs); }, fail: (runs) => { sh('umount', '-l', runs); sh('mount', '--bind', '-o', 'ro', `${runs}.disk`, runs); }, undo: (runs) => { sh('umount', '-l', runs); sh('mount', '--bind', `${runs}.disk`, runs); } },
      full: { setup: (runs) => sh('mount', '-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', runs), fail: (runs) => sh('dd', 'if=/dev/zero', `of=${join(runs, 'filler')}`, 'bs=1M'), undo: (runs) => rmSync(join(runs, 'filler'), { force: true }) },
    };
    for (const [name, c] of Object.entries(cases)) {
      const dir = project(threeSteps);
      const runs = join(dir, 'runs');
      const runDir = join(runs, 'tiny');
      mkdirSync(runs);
      c.setup(runs);
      try {
        const run = clawgym(dir, ['run']);
        await until(() => stateOf(runDir)?.stepStarts?.['2'] === 1 && existsSync(join(runDir, 'calls')) && readdirSync(join(runDir, 'calls')).some((f) => f.startsWith('s2a1-')), 120_000);
        c.fail(runs);
        const r = await exitWithin(run, 10_000);
        c.undo(runs);
        const resumed = spawnSync(process.execPath, [bin, 'run', '--resume'], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
        const s = steps(runDir);
        const ok = r !== 'hung' && r.code === 1 && run.out().includes('CLAWGYM_RUN_DIR_UNWRITABLE') && resumed.status === 0 && s.steps === '1,2,3';
        if (!ok) log(`    ${name}: exit ${JSON.stringify(r)}, resume ${resumed.status}, steps [${s.steps}]: ${run.out().slice(-300)}`);
        tally(`${name} run folder mid-step: exit within 10 s, coded, --resume with no step missing or twice`, { hangs: r === 'hung' ? 1 : 0, crashes: ok || r === 'hung' ? 0 : 1 });
      } finally {
        while (sh('umount', '-l', runs).status === 0);
      }
    }
  }

  async function unrecorded() {
    log('serve: its run folder deleted while sessions are open');
    const dir = project('{ run: { outDir: "runs" } }');
    const s = clawgym(dir, ['serve', '--engine', 'scripted', '--port', '0', '--sessions', '2', '--name', 'deleted']);
    await until(() => s.out().includes('Press Ctrl-C'), 60_000);
    const sessions = [...s.out().matchAll(/ANTHROPIC_BASE_URL=(\S+) ANTHROPIC_API_KEY=(\S+)/g)].map((m) => ({ base: m[1], key: m[2] }));
    const ask = async ({ base, key }, stream) => {
      const res = await fetch(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 32, stream, messages: [{ role: 'user', content: 'hi' }] }) }).catch(() => undefined);
      const text = res ? await res.text().catch(() => '') : '';
      return res?.status === 200 && (stream ? text.includes('event: message_stop') : text.includes('"type":"message"'));
    };
    await ask(sessions[0], false);
    rmSync(join(dir, 'runs', 'deleted'), { recursive: true, force: true });
    // Session 1 had its file open when the folder went; session 2 opens its first after (in a folder made again).
    const answered = [0, 0];
    for (let i = 0; i < 8; i++) if (await ask(sessions[i % 2], i % 3 === 0)) answered[i % 2]++;
    s.child.kill('SIGINT');
    const r = await exitWithin(s, 15_000);
    const recorded = sessions.map((x) => jsonl(join(dir, 'runs', 'deleted', 'calls', `${x.base.split('/').pop()}.jsonl`)).length);
    const unrecorded = answered.reduce((a, n, i) => a + Math.max(0, n - recorded[i]), 0);
    if (unrecorded) log(`    answered ${answered.join('+')}, recorded ${recorded.join('+')}`);
    tally('no call is answered as a success without its record after the records folder is deleted', { unrecorded_answers: unrecorded, hangs: r === 'hung' ? 1 : 0 });
  }

  async function gcOtherProject() {
    log('gc: another project\'s dead run of the same name');
    const root = mkdtempSync(join(tmpdir(), 'bench-faults-gc-'));
    const mine = project(`{ name: 'tiny', sandbox: { use: 'local', options: { root: ${JSON.stringify(root)} } } }`);
    const theirs = project(`{ name: 'tiny', sandbox: { use: 'local', options: { root: ${JSON.stringify(root)} } } }`);
    const script = join(theirs, 'runner.js');
    writeFileSync(script, `const { localSandboxProvider } = require(${JSON.stringify(join(repo, 'core', 'dist', '2-sandbox', 'local.js'))});
(async () => {
  await new Promise((r) => require('net').createServer().listen(${JSON.stringify(join(theirs, 'x.sock'))}, r));
  const sb = await localSandboxProvider({ root: ${JSON.stringify(root)}, log: () => {} }).create({ runId: 'tiny', project: ${JSON.stringify(theirs)}, rolloutId: 'r1', limits: {}, modelEndpoint: { socketPath: ${JSON.stringify(join(theirs, 'x.sock'))}, url: 'http://unused' } });
  console.log(require('path').dirname(sb.workspaceHostPath));
  setInterval(() => {}, 1000);
})();`);
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    await until(() => out.includes('\n'), 30_000);
    const sandbox = out.trim();
    child.kill('SIGKILL');
    await sleep(200);
    spawnSync(process.execPath, [bin, 'gc'], { cwd: mine, timeout: 60_000 });
    const kept = existsSync(sandbox);
    spawnSync(process.execPath, [bin, 'gc'], { cwd: theirs, timeout: 60_000 });
    tally('gc leaves another project\'s leftovers alone; that project\'s gc removes them', { gc_live_removed: kept ? 0 : 1, misclassified: existsSync(sandbox) ? 1 : 0 });
    rmSync(root, { recursive: true, force: true });
  }

  return { lock, launcher, unwritable, unrecorded, gcOtherProject };
};
