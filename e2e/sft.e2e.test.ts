import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapPath } from '@clawgym/core';
import { describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'clawgym sft', () => {
  it('plays oracle demonstrations through the harness, takes supervised steps and saves a checkpoint a run starts from', () => {
    const model = "{ model: { dModel: 32, layers: 1, heads: 2, context: 256 }, checkpoint: 'ck' }";
    const dir = tempProject({ 'clawgym.config.mjs': `export default {
  name: 'tiny', engine: { use: 'embedded', options: ${model} }, trainer: { use: 'embedded', options: ${model} },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['vocab-write'] } }], algorithm: 'grpo',
  run: { steps: 1, tasksPerStep: 1, groupSize: 2, concurrency: 4, evalTasks: 2, evalEvery: 0, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-sft-');
    const bad = spawnSync(process.execPath, [bin, 'sft', '--steps', '0'], { cwd: dir, encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--steps must be a whole number of at least 1');
    const late = spawnSync(process.execPath, [bin, 'sft', '--steps', '5', '--stop-after', '9'], { cwd: dir, encoding: 'utf8' });
    expect(late.status).toBe(1);
    expect(late.stderr).toContain('--stop-after must be a whole number from 1 to --steps (5), got "9"');
    // The config names a checkpoint that does not exist yet: --fresh makes it from random weights.
    const r = spawnSync(process.execPath, [bin, 'sft', '--fresh', '--demos', '4', '--steps', '5', '--stop-after', '3', '--batch', '2', '--save-every', '2', '--out', 'ck'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toContain('4 demonstrations (of 4 rollouts)');
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('5 supervised steps (stopping after 3)');
    expect(r.stdout).toMatch(/step 3\/5 {2}loss \d+\.\d+/);
    expect(r.stdout).not.toContain('step 4/5');
    expect(existsSync(join(dir, 'ck', 'model.safetensors'))).toBe(true);
    // --reuse-demos trains on the same demonstrations without playing them: the same first step.
    const again = spawnSync(process.execPath, [bin, 'sft', '--fresh', '--reuse-demos', '--demos', '4', '--steps', '5', '--stop-after', '1', '--batch', '2', '--out', 'ck2'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('reusing 4 played rollouts');
    expect(again.stderr).not.toContain('playing');
    expect(/step 1\/5 {2}loss (\S+)/.exec(again.stdout)?.[1]).toBe(/step 1\/5 {2}loss (\S+)/.exec(r.stdout)?.[1]);
    const other = spawnSync(process.execPath, [bin, 'sft', '--fresh', '--reuse-demos', '--demos', '3', '--steps', '1', '--out', 'ck2'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(other.status).toBe(1);
    expect(other.stderr).toContain('were played for other tasks or harnesses (4 task x harness pairs there, 3 asked for with --demos 3)');
    expect(JSON.parse(readFileSync(join(dir, 'ck', 'config.json'), 'utf8')).step).toBe(3);
    // A run starts from it (weights only: the run's optimiser starts at step 0).
    const run = spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'tiny', 'checkpoint', 'config.json'), 'utf8')).step).toBe(1);
  }, 300_000);
});
