import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createTestKernel, removeTempProjects, tempProject } from '../testing';
import { printError } from './errors';

afterAll(removeTempProjects);

const bin = resolve(__dirname, '../../bin/clawgym.js');

// A task suite whose verifier has a bug (it reads a property of undefined), as a plugin file of the project.
const SUITE = `module.exports = () => ({ name: 'tasks-demo', apply(api) {
  api.provide.taskSuite({ name: 'count-lines', async tasks(split) {
    return [{ id: split + '-1', category: 'demo', instruction: 'write n.txt', async setup(ws) { await ws.writeFile('a.txt', 'x'); },
      async verify(ws) { const parsed = undefined; return { reward: parsed.lines, pass: true, details: '' }; },
      oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'n.txt', content: '1' } }] }] }];
  } });
} });
`;

describe('a verifier that throws (clawgym eval, built, as a user runs it)', () => {
  it('names suite and plugin, says it is a plugin bug, prints its stack with CLAWGYM_DEBUG=1, keeps it in eval.json, and does not retry', () => {
    const dir = tempProject({
      'suite.cjs': SUITE,
      'clawgym.config.mjs': "export default { plugins: ['./suite.cjs'], tasks: ['count-lines'], harnesses: ['agentloop'], run: { infraRetries: 2 } };\n",
    }, 'clawgym-verifier-bug-');
    const r = spawnSync(process.execPath, [bin, 'eval', '--engine', 'oracle', '--name', 'e'], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, CLAWGYM_DEBUG: '1' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('clawgym: the verifier of task "test-1" in task suite "count-lines" (plugin "tasks-demo", clawgym-test-project) threw TypeError: Cannot read properties of undefined (reading \'lines\'). This is a bug in the plugin, not the agent\'s doing or the machine\'s: the rollout is neither scored nor retried\n');
    expect(r.stderr).not.toContain('Infrastructure failures are the machine');
    expect(r.stderr).toMatch(/Caused by: TypeError: Cannot read properties of undefined \(reading 'lines'\)\n\s+at Object\.verify \(.*suite\.cjs:4:/);
    const evalJson = JSON.parse(readFileSync(join(dir, 'runs', 'e', 'eval.json'), 'utf8')) as { rollouts: { fault?: { code: string; stack: string } }[] };
    expect(evalJson.rollouts).toHaveLength(1);
    expect(evalJson.rollouts[0]!.fault).toMatchObject({ code: 'CLAWGYM_VERIFIER_BUG', stack: expect.stringMatching(/suite\.cjs:4:/) });
    // Not retried: one attempt's session, none of `.retry1`, `.retry2`.
    expect(readdirSync(join(dir, 'runs', 'e', 'calls')).filter((f) => f.includes('retry'))).toEqual([]);
  }, 120_000);
});

describe('a hook tap that throws', () => {
  it('keeps the cause\'s stack: printed with CLAWGYM_DEBUG=1, pointed to without it', async () => {
    const kernel = await createTestKernel({ plugins: [{ name: 'shaper', apply(api) { api.hooks.stepStart.tap({}, () => { throw new RangeError('shaping went wrong'); }); } }] });
    const err = await kernel.hooks.stepStart.promise({ step: 1 } as never).then(() => undefined, (e: unknown) => e);
    let plain = '';
    printError(err, (s) => { plain += s; });
    expect(plain).toBe('clawgym: plugin "shaper" failed in hook "stepStart": shaping went wrong\n  code: CLAWGYM_HOOK_FAILED\n  (set CLAWGYM_DEBUG=1 for the stack trace of the cause)\n');
    let debug = '';
    const before = process.env.CLAWGYM_DEBUG;
    process.env.CLAWGYM_DEBUG = '1';
    try { printError(err, (s) => { debug += s; }); } finally { if (before === undefined) delete process.env.CLAWGYM_DEBUG; else process.env.CLAWGYM_DEBUG = before; }
    expect(debug).toMatch(/^clawgym: plugin "shaper" failed in hook "stepStart": shaping went wrong\n  code: CLAWGYM_HOOK_FAILED\nHookError: [^\n]+\n(\s+at [^\n]+\n)+Caused by: RangeError: shaping went wrong\n\s+at .*plugin-faults\.test\.ts/);
  });
});
