import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFixes } from './fix';

describe('runFixes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-fix-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each command in the given folder and says which failed', () => {
    const log: string[] = [];
    const steps = runFixes(['touch made', 'exit 3'], { cwd: dir, log: (s) => log.push(s), root: true });
    expect(existsSync(join(dir, 'made'))).toBe(true);
    expect(steps).toEqual([{ command: 'touch made', result: 'ran' }, { command: 'exit 3', result: 'failed', detail: 'exit 3' }]);
    expect(log).toEqual(['$ touch made\n', '$ exit 3\n']);
  });

  it('does not run system package installs without root: it returns the sudo line to type', () => {
    const log: string[] = [];
    const steps = runFixes(['apt-get install -y bubblewrap', 'touch other'], { cwd: dir, log: (s) => log.push(s), root: false });
    expect(steps[0]).toEqual({ command: 'apt-get install -y bubblewrap', result: 'manual', detail: 'sudo apt-get install -y bubblewrap' });
    expect(steps[1]).toEqual({ command: 'touch other', result: 'ran' });
    expect(log).toEqual(['$ touch other\n']);
  });
});
