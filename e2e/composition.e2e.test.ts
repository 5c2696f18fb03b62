import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');

/**
 * A project whose config carries a plugin that replaces the serving proxy and the rollout
 * runner in the run container — as a user's plugin would (a proxy that ships records
 * elsewhere, a runner that schedules on a cluster). Each replacement notes, in `marks`, the
 * folder of the scope it was made for, every time a command makes one.
 */
function project(marks: string) {
  return tempProject({ 'clawgym.config.mjs': `import { appendFileSync } from 'node:fs';
import { instancePerContainerCachingFactory } from 'tsyringe';
import { RolloutRunner, ServingProxy, Tokens } from '@clawgym/core';
const mark = (what, s) => appendFileSync(${JSON.stringify(marks)}, what + ' ' + s.resolve(Tokens.RunDir) + '\\n');
class MarkedProxy extends ServingProxy {}
class MarkedRunner extends RolloutRunner {}
const replace = {
  name: 'acme:own-proxy-and-runner',
  apply(api) {
    const c = api.container;
    c.register(Tokens.Proxy, { useFactory: instancePerContainerCachingFactory((s) => {
      mark('proxy', s);
      return new MarkedProxy({ engine: s.resolve(Tokens.Engine), store: s.resolve(Tokens.CallStore), runId: s.resolve(Tokens.RunId), ...s.resolve(Tokens.ProxySettings) });
    }) });
    c.register(Tokens.Runner, { useFactory: instancePerContainerCachingFactory((s) => {
      mark('runner', s);
      return new MarkedRunner({ runId: s.resolve(Tokens.RunId), proxy: s.resolve(Tokens.Proxy), socketPath: s.resolve(Tokens.ProxySocket), sandboxes: s.resolve(Tokens.Sandboxes), concurrency: 2, timeoutMs: 60000, infraRetries: 0 });
    }) });
  },
};
const model = { model: { dModel: 32, layers: 1, heads: 2, context: 384 } };
export default {
  name: 'tiny', plugins: [replace], engine: { use: 'embedded', options: model }, trainer: { use: 'embedded', options: model },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], algorithm: 'grpo',
  run: { steps: 1, tasksPerStep: 1, groupSize: 2, concurrency: 2, evalTasks: 1, evalEvery: 0, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-composition-');
}

const marked = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

describeIf(bubblewrapMissing(), 'a plugin that replaces the proxy and the runner', () => {
  it('is used by run (training and held-out evaluation), eval, sft and serve', async () => {
    const dir = project(join(tempProject({}), 'marks'));
    const marks = readFileSync(join(dir, 'clawgym.config.mjs'), 'utf8').match(/appendFileSync\("([^"]+)"/)![1]!;
    const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 240_000 });

    const run = cli(['run']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const runs = join(dir, 'runs');
    expect(marked(marks)).toEqual(expect.arrayContaining([
      `proxy ${join(runs, 'tiny')}`, `runner ${join(runs, 'tiny')}`,
      `proxy ${join(runs, 'tiny', 'eval', 'step-0')}`, `runner ${join(runs, 'tiny', 'eval', 'step-0')}`,
      `proxy ${join(runs, 'tiny', 'eval', 'step-1')}`, `runner ${join(runs, 'tiny', 'eval', 'step-1')}`,
    ]));

    const evaluated = cli(['eval', '--limit', '1', '--name', 'ev']);
    expect(evaluated.status).toBe(0);
    expect(marked(marks)).toEqual(expect.arrayContaining([`proxy ${join(runs, 'ev')}`, `runner ${join(runs, 'ev')}`]));

    const sft = cli(['sft', '--demos', '1', '--steps', '1', '--name', 'cold']);
    expect(sft.status).toBe(0);
    expect(marked(marks)).toEqual(expect.arrayContaining([`proxy ${join(runs, 'cold', 'demos')}`, `runner ${join(runs, 'cold', 'demos')}`]));

    // serve: started, and stopped by SIGINT once it prints its sessions.
    const served = spawn(process.execPath, [bin, 'serve', '--name', 'served', '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    await new Promise<void>((ok) => served.stdout.on('data', (d: Buffer) => { out += d; if (out.includes('Press Ctrl-C to stop.')) ok(); }));
    const exited = new Promise<number | null>((ok) => served.on('exit', ok));
    served.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(marked(marks)).toContain(`proxy ${join(runs, 'served')}`);
  }, 600_000);
});
