import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const without = join(repo, 'scripts', 'without-commands.sh');

/**
 * A tiny real run (embedded model, agentloop, built-in write tasks) whose sandbox is `sandbox`:
 * `local` (the default), or a provider made in the config from the local one (`extra` defines it).
 */
function project(o: { sandbox?: string; extra?: string; run?: string } = {}) {
  return tempProject({ 'clawgym.config.mjs': `import { localSandboxProvider } from '@clawgym/core';
const model = { model: { dModel: 32, layers: 1, heads: 2, context: 384 } };
${o.extra ?? 'const plugins = [];'}
export default {
  name: 'tiny', plugins, engine: { use: 'embedded', options: model }, trainer: { use: 'embedded', options: model },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], algorithm: 'grpo',
  ${o.sandbox ? `sandbox: '${o.sandbox}',` : ''}
  run: { steps: 10, tasksPerStep: 1, groupSize: 2, concurrency: 2, evalTasks: 2, evalEvery: 0, infraRetries: 0, rolloutTimeoutMs: 60000${o.run ?? ''} },
};\n` }, 'clawgym-first-contact-');
}

/** A sandbox plugin: the local sandbox whose `create` fails after `works` sandboxes, and whose doctor check says `check`. */
const flakySandbox = (works: number, check = '{ ok: true, reason: "ready" }') => `
const local = localSandboxProvider({ log: () => {} });
let made = 0;
const flaky = { ...local, name: 'flaky', async check() { return ${check}; },
  async create(spec) { if (++made > ${works}) throw new Error('the flaky sandbox broke after ${works} sandbox(es)'); return local.create(spec); } };
const plugins = [{ name: 'flaky-sandbox', apply(api) { api.provide.sandbox(flaky); } }];`;

const clawgym = (dir: string, args: string[], timeout = 120_000) => {
  const started = Date.now();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout });
  return { ...r, seconds: (Date.now() - started) / 1000 };
};

describe('a run that cannot work stops before it starts', () => {
  it('refuses to start when the doctor finds something missing, naming it and the command that installs it', () => {
    const dir = project({ sandbox: 'flaky', extra: flakySandbox(100, '{ ok: false, reason: "the frobnicator is not installed", install: "apt-get install -y frobnicator" }') });
    for (const command of [['run'], ['eval', '--limit', '1'], ['sft', '--demos', '1', '--steps', '1']]) {
      const r = clawgym(dir, command);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`clawgym ${command[0]} cannot work on this machine; missing:`);
      expect(r.stderr).toContain('sandbox flaky: isolation: the frobnicator is not installed');
      expect(r.stderr).toContain('apt-get install -y frobnicator');
      expect(r.stderr).toContain('clawgym doctor --fix');
      expect(r.stdout).not.toContain('finished');
    }
    expect(existsSync(join(dir, 'runs'))).toBe(false); // nothing started
  });

  it('stops a run whose held-out evaluation is all infrastructure failures, with a non-zero exit and the first failure', () => {
    const dir = project({ sandbox: 'flaky', extra: flakySandbox(0) });
    const r = clawgym(dir, ['run']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/the held-out evaluation at step 0 measured nothing: all 2 rollouts failed for infrastructure reasons; the first: agentloop on \S+: .*the flaky sandbox broke after 0 sandbox/);
    expect(r.stdout).not.toContain('finished');
  });
});

describeIf(bubblewrapMissing(), 'a run whose steps train on nothing stops', () => {
  it('after run.maxInfraSteps steps in a row of only infrastructure failures: exit 1, the first failure quoted, the steps before kept', () => {
    // The held-out evaluation at step 0 gets its two sandboxes; every later rollout fails.
    const dir = project({ sandbox: 'flaky', extra: flakySandbox(2), run: ', maxInfraSteps: 2' });
    const r = clawgym(dir, ['run'], 240_000);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/every rollout of the last 2 step\(s\) \(up to step 2\) failed for infrastructure reasons \(run.maxInfraSteps is 2\); the first: agentloop on \S+: .*the flaky sandbox broke after 2 sandbox/);
    expect(r.stdout).not.toContain('finished');
    const metrics = readFileSync(join(dir, 'runs', 'tiny', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; step: number });
    expect(metrics.filter((m) => m.kind === 'step').map((m) => m.step)).toEqual([1, 2]);
    expect(metrics.filter((m) => m.kind === 'eval').map((m) => m.step)).toEqual([0]);
  }, 300_000);
});

/** Where a private mount namespace can hide programs (root, or unprivileged user namespaces). */
const namespaces = spawnSync(without, ['bwrap', '--', 'true'], { encoding: 'utf8' });
describeIf(namespaces.status === 0 ? undefined : `cannot hide programs in a mount namespace here: ${namespaces.stderr.trim()}`, 'a newcomer on a machine without bubblewrap or Docker', () => {
  it('`clawgym run` with the default sandbox exits non-zero within 30 s, naming bubblewrap and how to install it', () => {
    const dir = project();
    const started = Date.now();
    const r = spawnSync(without, ['bwrap', 'docker', 'dockerd', '--', process.execPath, bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(r.status).toBe(1);
    expect(seconds).toBeLessThan(30); // a bound the newcomer feels, not a timing of the code
    expect(r.stderr).toContain('clawgym run cannot work on this machine; missing:');
    expect(r.stderr).toContain('sandbox local: isolation: bubblewrap (bwrap) is not installed');
    expect(r.stderr).toContain('apt-get install -y bubblewrap');
    expect(existsSync(join(dir, 'runs'))).toBe(false);
  });

});

describe('clawgym doctor --fix', () => {
  it('`clawgym doctor --fix` runs the install commands, then checks again', () => {
    // A check that is satisfied once its install command has run: the fix runs it, the doctor passes.
    const marker = join(tempProject({}), 'installed');
    const dir = project({ sandbox: 'flaky', extra: flakySandbox(0, `(await import('node:fs')).existsSync(${JSON.stringify(marker)}) ? { ok: true, reason: 'installed' } : { ok: false, reason: 'not installed', install: 'touch ${marker}' }`) });
    const before = clawgym(dir, ['doctor']);
    expect(before.status).toBe(1);
    expect(before.stdout).toContain(`touch ${marker}`);
    const fixed = clawgym(dir, ['doctor', '--fix']);
    expect(fixed.stderr).toContain(`$ touch ${marker}`);
    expect(fixed.status).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});
