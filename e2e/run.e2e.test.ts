import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapPath } from '@clawgym/core';
import { describeIf, harnessE2ePrerequisites, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');

/** A tiny but real training run: embedded model, agentloop, built-in write tasks, GRPO. */
function project(steps: number, families = ['write'], run = '') {
  return tempProject({ 'clawgym.config.mjs': `const model = { model: { dModel: 32, layers: 1, heads: 2, context: 384 } };
export default {
  name: 'tiny', engine: { use: 'embedded', options: model }, trainer: { use: 'embedded', options: model },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ${JSON.stringify(families)} } }], algorithm: 'grpo',
  run: { steps: ${steps}, tasksPerStep: ${families.length > 1 ? 4 : 2}, groupSize: 2, concurrency: 4, evalTasks: 2, evalEvery: 0, rolloutTimeoutMs: 60000${run} },
};\n` }, 'clawgym-run-');
}

const parses = (line: string) => { try { JSON.parse(line); return true; } catch { return false; } };
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; step: number; values: Record<string, unknown> }) : []);

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'clawgym run', () => {
  it('trains, writes the run directory, and after SIGKILL mid-step resumes with no step lost or repeated and no record lost', async () => {
    const dir = project(4);
    const runDir = join(dir, 'runs', 'tiny');
    const metrics = join(runDir, 'metrics.jsonl');
    // Start, and kill hard while step 2 is in flight.
    const child = spawn(process.execPath, [bin, 'run'], { cwd: dir, stdio: 'ignore' });
    await new Promise<void>((ok, fail) => {
      const timer = setInterval(() => {
        // state.json is replaced by rename, so a read sees a whole file or none.
        const state = existsSync(join(runDir, 'state.json')) ? JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) : undefined;
        if (state?.step === 1 && state.stepStarts?.['2'] === 1) { clearInterval(timer); child.kill('SIGKILL'); ok(); }
      }, 20);
      child.on('exit', () => { clearInterval(timer); fail(new Error('the run ended before it could be killed')); });
    });
    await new Promise((r) => child.on('exit', r));
    const callsBefore = readdirSync(join(runDir, 'calls'));
    const recordsBefore = new Map(callsBefore.map((f) => [f, readFileSync(join(runDir, 'calls', f), 'utf8').trim().split('\n').length]));

    const resumed = spawnSync(process.execPath, [bin, 'run', '--resume'], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain('finished after step 4');
    // Every step exactly once, in order; held-out evaluations at the start and the end.
    expect(lines(metrics).filter((l) => l.kind === 'step').map((l) => l.step)).toEqual([1, 2, 3, 4]);
    expect(lines(metrics).filter((l) => l.kind === 'eval').map((l) => l.step)).toEqual([0, 4]);
    // No record lost: every call file from before the kill is still there, at least as long.
    for (const [f, n] of recordsBefore) expect(readFileSync(join(runDir, 'calls', f), 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(n);
    // Step 2 was restarted under new rollout ids; the killed attempt's records are kept apart.
    const calls = readdirSync(join(runDir, 'calls'));
    expect(calls.some((f) => f.startsWith('s2a2-'))).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8'))).toMatchObject({ step: 4, stepStarts: { 1: 1, 2: 2, 3: 1, 4: 1 } });
    expect(readdirSync(join(runDir, 'checkpoint')).sort()).toEqual(['clawgym-step.json', 'config.json', 'model.safetensors', 'optimizer.safetensors']);
    expect(JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')).run.steps).toBe(4);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toContain('data-charts-drawn');
  }, 300_000);

  it('after SIGKILL during the final held-out evaluation, --resume evaluates again under fresh ids and finishes', async () => {
    const dir = project(1);
    const runDir = join(dir, 'runs', 'tiny');
    const evalCalls = join(runDir, 'eval', 'step-1', 'calls');
    const child = spawn(process.execPath, [bin, 'run'], { cwd: dir, stdio: 'ignore' });
    await new Promise<void>((ok, fail) => {
      const timer = setInterval(() => {
        // Step 1 trained, its evaluation started: a call of it recorded.
        if (existsSync(evalCalls) && readdirSync(evalCalls).some((f) => readFileSync(join(evalCalls, f), 'utf8').includes('"callIndex"'))) { clearInterval(timer); child.kill('SIGKILL'); ok(); }
      }, 10);
      child.on('exit', () => { clearInterval(timer); fail(new Error('the run ended before its final evaluation could be killed')); });
    });
    await new Promise((r) => child.on('exit', r));
    expect(existsSync(join(runDir, 'eval', 'step-1', 'proxy.sock'))).toBe(true); // left behind by the kill
    const killed = readdirSync(evalCalls);

    const resumed = spawnSync(process.execPath, [bin, 'run', '--resume'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(resumed.stderr).not.toContain('EADDRINUSE');
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain('finished after step 1');
    // The reporters mark where the run started and where it was resumed (runStart), then each event once.
    const events = lines(join(runDir, 'metrics.jsonl'));
    expect(events.map((l) => `${l.kind}:${l.step}`)).toEqual(['info:0', 'eval:0', 'step:1', 'info:1', 'eval:1']);
    expect(events.filter((l) => l.kind === 'info').map((l) => l.values.event)).toEqual(['start', 'resume']);
    // The restarted evaluation used fresh ids; every call file holds one attempt, indices 0..n-1.
    const files = readdirSync(evalCalls);
    expect(files.filter((f) => f.endsWith('-a2.jsonl')).length).toBe(2);
    for (const f of killed) expect(files).toContain(f);
    for (const f of files) {
      const text = readFileSync(join(evalCalls, f), 'utf8').split('\n').filter(Boolean);
      // The kill may cut the killed attempt's last record mid-write (a long record is written piece
      // by piece); the call store skips such a line when it reads. Only that line, only there.
      if (killed.includes(f) && text.length > 0 && !parses(text[text.length - 1])) text.pop();
      const indices = text.map((l) => (JSON.parse(l) as { callIndex: number }).callIndex);
      expect(indices).toEqual(indices.map((_, i) => i));
    }
    const evaluated = JSON.parse(readFileSync(join(runDir, 'eval', 'step-1', 'eval.json'), 'utf8')) as { rollouts: { rolloutId: string }[] };
    expect(evaluated.rollouts.map((r) => r.rolloutId).every((id) => id.endsWith('-a2'))).toBe(true);
  }, 240_000);

  it('refuses to overwrite an existing run without --resume, extends a finished one with --resume --steps; a step\'s reward is also split by category', () => {
    const dir = project(1, ['write', 'vocab-write']);
    expect(spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 120_000 }).status).toBe(0);
    const step = lines(join(dir, 'runs', 'tiny', 'metrics.jsonl')).find((l) => l.kind === 'step') as unknown as { values: Record<string, number> };
    const perCategory = Object.keys(step.values).filter((k) => k.startsWith('reward/agentloop/')).sort();
    expect(perCategory).toEqual(['reward/agentloop/vocab-write', 'reward/agentloop/write']);
    const again = spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8' });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect(again.stderr).toContain('Pass --resume');
    // --resume --steps extends the finished run: the new step follows, then a held-out evaluation.
    const bad = spawnSync(process.execPath, [bin, 'run', '--resume', '--steps', '0'], { cwd: dir, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--steps must be a whole number of at least 1, got "0"');
    const longer = spawnSync(process.execPath, [bin, 'run', '--resume', '--steps', '2'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(longer.status).toBe(0);
    expect(longer.stdout).toContain('finished after step 2');
    const metrics = lines(join(dir, 'runs', 'tiny', 'metrics.jsonl'));
    expect(metrics.filter((l) => l.kind === 'step').map((l) => l.step)).toEqual([1, 2]);
    expect(metrics.filter((l) => l.kind === 'eval').map((l) => l.step)).toEqual([0, 1, 2]);
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'tiny', 'config.json'), 'utf8')).run.steps).toBe(2);
    // Resuming a finished run neither trains nor evaluates again; asking for fewer steps than it has is refused.
    const same = spawnSync(process.execPath, [bin, 'run', '--resume', '--steps', '2'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(same.status).toBe(0);
    expect(lines(join(dir, 'runs', 'tiny', 'metrics.jsonl'))).toEqual(metrics);
    const shorter = spawnSync(process.execPath, [bin, 'run', '--resume', '--steps', '1'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(shorter.status).toBe(1);
    expect(shorter.stderr).toContain('has already trained 2 steps, more than run.steps (1)');
    expect(shorter.stderr).toContain('--steps 2 or more');
  }, 240_000);

  it('draws a live status line on a terminal (step, rollouts, reward, Pass@1, tok/s, ETA) and plain lines in a pipe', () => {
    const dir = project(2);
    // util-linux `script` runs the command on a pseudo-terminal, as a user's shell would.
    const tty = spawnSync('script', ['-qefc', `${process.execPath} ${bin} run`, '/dev/null'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    expect(tty.status).toBe(0);
    expect(tty.stdout).toMatch(/\r\x1b\[Keval @ step 0 · rollouts \d+\/2 \(\d+ running\)/);
    expect(tty.stdout).toMatch(/\r\x1b\[Kstep [12]\/2 · rollouts \d+\/4 \(\d+ running\)( · reward [\d.]+)? · held-out Pass@1 [\d.]+%/);
    expect(tty.stdout).toMatch(/· \d+ tok\/s · ETA \d+s/);
    expect(tty.stdout).toContain('finished after step 2');
    // Piped, the same run logs plain lines only.
    const piped = spawnSync(process.execPath, [bin, 'run', '--name', 'piped'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    expect(piped.status).toBe(0);
    expect(piped.stdout).not.toContain('\x1b[');
    expect(piped.stdout).toMatch(/step 2\/2: reward/);
  }, 360_000);
});

const claudeCode = harnessE2ePrerequisites('claude-code');

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'clawgym run, evaluated through a harness it does not train through', () => {
  describeIf(claudeCode.missing, 'with the real Claude Code CLI', () => {
    it('run.evalHarnesses: trains through agentloop only, evaluates held-out Pass@1 through agentloop and Claude Code', () => {
      const cc = JSON.stringify({ use: 'claude-code', options: { bin: 'bin' in claudeCode.cli ? claudeCode.cli.bin : '', tools: ['Bash', 'Read', 'Write'] } });
      const dir = project(1, ['vocab-upper'], `, evalHarnesses: ['agentloop', ${cc}]`);
      const r = spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const all = lines(join(dir, 'runs', 'tiny', 'metrics.jsonl')) as unknown as { kind: string; step: number; values: Record<string, number> }[];
      const evals = all.filter((l) => l.kind === 'eval');
      expect(evals.map((l) => l.step)).toEqual([0, 1]);
      for (const e of evals) expect(Object.keys(e.values).filter((k) => k.endsWith('/all')).sort()).toEqual(['pass1/agentloop/all', 'pass1/claude-code/all']);
      // Trained through agentloop alone: every step rollout went through it.
      const step = all.find((l) => l.kind === 'step')!;
      expect(Object.keys(step.values).filter((k) => k.startsWith('reward/'))).toEqual(['reward/agentloop']);
      const evaluated = JSON.parse(readFileSync(join(dir, 'runs', 'tiny', 'eval', 'step-0', 'eval.json'), 'utf8')) as { rollouts: { harness: string; outcome: string }[] };
      expect(evaluated.rollouts.filter((x) => x.harness === 'claude-code').length).toBe(2);
      expect(evaluated.rollouts.every((x) => x.outcome !== 'infra-error')).toBe(true);
    }, 240_000);
  });
});
