import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fingerprintOf } from './fingerprint';
import { FingerprintWatch } from './watch';

const bin = resolve(__dirname, '../../../bin/clawgym.js');
const dir = mkdtempSync(join(tmpdir(), 'clawgym-fp-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, 'harness', 'fingerprint', ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });

describe('clawgym harness fingerprint (built, as a user runs it)', () => {
  it('prints the last fingerprint a run saw, its tools, and what changed from the pinned one; JSON for scripts', async () => {
    const run = join(dir, 'runs', 'default');
    const tools = [{ name: 'bash', parameters: { type: 'object' } }, { name: 'write', parameters: { type: 'object' } }];
    const before = fingerprintOf({ system: 'You are an agent.', tools }, 'pi', { cliVersion: '0.73.1' });
    const after = fingerprintOf({ system: 'You are an agent.', tools: [tools[0]!, { name: 'write', parameters: { type: 'object', required: ['path'] } }] }, 'pi', { cliVersion: '0.74.0' });
    require('node:fs').mkdirSync(run, { recursive: true });
    await new FingerprintWatch(run, () => undefined).observe([before], 'step 1');
    await new FingerprintWatch(run, () => undefined).observe([after], 'step 1');
    const r = cli('pi');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('CLI version  0.74.0');
    expect(r.stdout).toContain(`  ${after.tools.write}  write`);
    expect(r.stdout).toContain(`differs from the fingerprint pinned in ${run}: CLI version 0.73.1 → 0.74.0; tool schemas changed: write`);
    const json = JSON.parse(cli('pi', 'runs/default', '--json').stdout) as { pinned: unknown; last: unknown; changes: string[] };
    expect(json).toMatchObject({ pinned: before, last: after, changes: ['CLI version 0.73.1 → 0.74.0', 'tool schemas changed: write'] });
  });

  it('a harness no run recorded fails (exit 1), saying how to record one', () => {
    const r = cli('gemini-cli');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no fingerprint of harness "gemini-cli" recorded in any run under');
    expect(r.stderr).toContain('clawgym run');
  });
});
