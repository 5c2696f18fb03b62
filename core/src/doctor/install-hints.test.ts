import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../config/load';
import { installPackage, project, removeProjects, suitePlugin } from '../kernel/__fixtures__/packages';
import type { DoctorRow } from './doctor';
import { doctor } from './doctor';

afterAll(removeProjects);

/** A user's project with @clawgym/core alone installed (none of ClawGym's plugin packages), and the demo suite's package. */
function coreOnly(config: string): string {
  const dir = project();
  mkdirSync(join(dir, 'node_modules', '@clawgym'), { recursive: true });
  symlinkSync(resolve(__dirname, '..', '..'), join(dir, 'node_modules', '@clawgym', 'core'));
  installPackage(dir, 'clawgym-plugin-tasks-demo', suitePlugin('tasks-demo', 'count-lines'));
  writeFileSync(join(dir, 'clawgym.config.mjs'), `export default ${config};\n`);
  return dir;
}

const bin = resolve(__dirname, '../../bin/clawgym.js');

describe('clawgym doctor\'s install commands', () => {
  // The built CLI, as a user runs it: under jest every workspace package would resolve.
  it('name only packages that exist: the engine\'s package for the trainer it provides, none for a typo', () => {
    const dir = coreOnly("{ algorithm: 'ppo', tasks: ['taks-demo'] }");
    const r = spawnSync(process.execPath, [bin, 'doctor', '--json'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const byWhat = Object.fromEntries((JSON.parse(r.stdout) as DoctorRow[]).map((row) => [row.what, row]));
    expect(byWhat['algorithm ppo']).toMatchObject({ status: 'missing', install: 'npm i -D @clawgym/algo-ppo' });
    expect(byWhat['engine embedded']).toMatchObject({ status: 'missing', install: 'npm i -D @clawgym/engine-embedded' });
    expect(byWhat['trainer embedded']).toMatchObject({ status: 'missing', install: 'npm i -D @clawgym/engine-embedded' });
    expect(byWhat['taskSuite taks-demo']).toMatchObject({ status: 'missing', detail: expect.stringContaining('Did you mean "count-lines"') });
    expect(byWhat['taskSuite taks-demo']!.install).toBeUndefined();
  }, 60_000);

  it('offer none for a suite listed by `clawgym plugins` (found), nor for a suite named by its plugin\'s name (says what to write)', async () => {
    const dir = coreOnly('{}');
    const rows = await doctor(resolveConfig({ tasks: ['count-lines', 'tasks-demo'] }, { rootDir: dir }));
    const byWhat = Object.fromEntries(rows.map((r) => [r.what, r]));
    expect(byWhat['taskSuite count-lines']).toMatchObject({ status: 'ok', detail: 'from clawgym-plugin-tasks-demo@1.0.0' });
    expect(byWhat['taskSuite tasks-demo']).toMatchObject({ status: 'missing', detail: expect.stringContaining('the package provides taskSuite "count-lines"') });
    expect(byWhat['taskSuite tasks-demo']!.install).toBeUndefined();
  }, 60_000);
});
