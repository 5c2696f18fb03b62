import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedCliVersion, npmPackageVersion } from './helpers';

/** An npm prefix holding `@acme/cli` 1.2.3, whose bin prints another version when run. */
function prefix(): { root: string; bin: string; script: string } {
  const root = mkdtempSync(join(tmpdir(), 'clawgym-pkgversion-'));
  const pkg = join(root, 'node_modules', '@acme', 'cli');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  mkdirSync(join(root, 'node_modules', '.bin'));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@acme/cli', version: '1.2.3' }));
  writeFileSync(join(pkg, 'dist', 'package.json'), JSON.stringify({ type: 'module' })); // no name: not the package
  const script = join(pkg, 'dist', 'cli.sh');
  writeFileSync(script, '#!/bin/sh\necho 9.9.9\n');
  chmodSync(script, 0o755);
  symlinkSync(join('..', '@acme', 'cli', 'dist', 'cli.sh'), join(root, 'node_modules', '.bin', 'acme'));
  return { root, bin: join(root, 'node_modules', '.bin', 'acme'), script };
}

describe('the version of an npm-installed CLI, read without starting it', () => {
  it("is its package's version, found through the bin link and past a nameless package.json", () => {
    const p = prefix();
    try {
      expect(npmPackageVersion(p.bin)).toBe('1.2.3');
      expect(npmPackageVersion(p.script)).toBe('1.2.3');
    } finally { rmSync(p.root, { recursive: true, force: true }); }
  });

  it('is undefined outside node_modules or for a relative name, where --version is asked instead', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-pkgversion-'));
    try {
      const bin = join(dir, 'tool');
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tool', version: '4.5.6' }));
      writeFileSync(bin, '#!/bin/sh\necho tool 7.0.1\n');
      chmodSync(bin, 0o755);
      expect(npmPackageVersion(bin)).toBeUndefined();
      expect(npmPackageVersion('tool')).toBeUndefined();
      await expect(installedCliVersion(bin, [bin, '--version'])).resolves.toBe('7.0.1');
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  it('starts nothing on the host; inside a sandbox (doctor on an image) it runs --version there', async () => {
    const p = prefix();
    try {
      // The script would say 9.9.9: the package's 1.2.3 shows it was not run.
      await expect(installedCliVersion(p.bin, [p.bin, '--version'])).resolves.toBe('1.2.3');
      const ran: string[][] = [];
      const run = async (argv: readonly string[]) => { ran.push([...argv]); return { exitCode: 0, signal: null, stdout: 'acme 2.0.0', stderr: '', timedOut: false }; };
      await expect(installedCliVersion(p.bin, [p.bin, '--version'], run)).resolves.toBe('2.0.0');
      expect(ran).toEqual([[p.bin, '--version']]);
    } finally { rmSync(p.root, { recursive: true, force: true }); }
  });
});
