import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ErrorCodes } from './errors';

// The catalogue in Fastify's manner (its test/internals/errors.test.js): every code is
// documented in docs/errors.md, every documented code exists, and every code is raised somewhere.
const repo = resolve(__dirname, '../..');

/** Shipped TypeScript under `dir` (no tests or fixtures; the test kits only with `kits`). */
function sources(dir: string, kits = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === '__fixtures__' || (name === 'testing' && !kits) || name === 'node_modules' || name === 'dist' ? [] : sources(path, kits);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const roots = [join(repo, 'core', 'src'), ...readdirSync(join(repo, 'plugins')).map((p) => join(repo, 'plugins', p, 'src'))];
const shipped = roots.flatMap((d) => sources(d));
/** With the test kits, which ship as entry points of their own (`@clawgym/sandbox-docker/testing` raises DOCKERD_FAILED). */
const shippedWithKits = roots.flatMap((d) => sources(d, true));
const documented = [...readFileSync(join(repo, 'docs', 'errors.md'), 'utf8').matchAll(/^### (CLAWGYM_[A-Z_]+)$/gm)].map((m) => m[1]!);

describe('error catalogue', () => {
  it('documents every code in docs/errors.md, and nothing else', () => {
    expect([...documented].sort()).toEqual(Object.values(ErrorCodes).sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it.each(Object.keys(ErrorCodes))('%s is raised somewhere in shipped code', (key) => {
    const users = shippedWithKits.filter((f) => !f.endsWith(join('core', 'src', 'errors.ts')) && readFileSync(f, 'utf8').includes(`ErrorCodes.${key}`));
    expect(users.map((f) => relative(repo, f))).not.toEqual([]);
  });

  it('leaves no plain `throw new Error` in shipped code: core and every plugin (the test kits\' assertions aside)', () => {
    expect(shipped.length).toBeGreaterThan(200);
    const plain = shipped.flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((line, i) => (/throw new Error\(/.test(line) ? [`${relative(repo, f)}:${i + 1}`] : [])));
    expect(plain).toEqual([]);
  });
});
