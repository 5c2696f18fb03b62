import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cliCheck } from './which';

const pi = { name: 'Pi', packageName: '@acme/not-installed-cli', missing: { reason: 'Pi is not installed: scripts/install-harnesses.sh pi', install: 'bash scripts/install-harnesses.sh pi' } };

/** `cliCheck` run with `dir` as the current folder (where a user runs `clawgym doctor`). */
function checkIn(dir: string, options?: Record<string, unknown>) {
  const before = process.cwd();
  process.chdir(dir);
  try { return cliCheck(options, pi); } finally { process.chdir(before); }
}

describe('cliCheck\'s install command', () => {
  it('names the repository\'s install script where that script is', () => {
    expect(checkIn(resolve(__dirname, '../../..'))).toEqual({ ok: false, ...pi.missing });
  });

  it('names the CLI\'s npm package in a project of one\'s own, which has no such script', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-cli-check-'));
    try {
      expect(checkIn(dir)).toEqual({ ok: false, reason: `Pi is not installed: its npm package @acme/not-installed-cli is not found from ${dir}`, install: 'npm i -D @acme/not-installed-cli' });
      expect(checkIn(dir, { bin: '/nonexistent/pi' })).toMatchObject({ ok: false, reason: 'Pi: bin "/nonexistent/pi" is not an executable file', install: 'npm i -D @acme/not-installed-cli' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pins the npm package to packageVersion when the CLI names one (its newest release does not install)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-cli-check-'));
    const before = process.cwd();
    process.chdir(dir);
    try {
      const pinned = { ...pi, packageVersion: '7.7.7' };
      expect(cliCheck(undefined, pinned)).toMatchObject({ ok: false, install: 'npm i -D @acme/not-installed-cli@7.7.7' });
      expect(cliCheck({ bin: '/nonexistent/pi' }, pinned)).toMatchObject({ ok: false, install: 'npm i -D @acme/not-installed-cli@7.7.7' });
    } finally {
      process.chdir(before);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
