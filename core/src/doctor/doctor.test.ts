import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { onPath } from '../util/which';
import { describeIf, removeTempProjects, tempProject } from '../testing';

const bin = resolve(__dirname, '../../bin/clawgym.js');
const pathDirs: string[] = [];
afterAll(() => { removeTempProjects(); for (const d of pathDirs) rmSync(d, { recursive: true, force: true }); });

/** A PATH with node on it and nothing else: a machine without bubblewrap, as a shell there sees it. */
function pathWithoutBubblewrap(): string {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-path-'));
  pathDirs.push(dir);
  symlinkSync(process.execPath, join(dir, 'node'));
  return dir;
}

const project = () => tempProject({ 'clawgym.config.mjs': "export default { algorithm: 'nope' };\n" }, 'clawgym-doctor-');
const doctor = (cwd: string, env: NodeJS.ProcessEnv, args: string[] = []) =>
  spawnSync(process.execPath, [bin, 'doctor', ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });

describe('clawgym doctor (built, as a user runs it)', () => {
  it('on a machine missing bubblewrap names it and the command that installs it, and a missing plugin with its npm install; exits 1', () => {
    const r = doctor(project(), { PATH: pathWithoutBubblewrap() });
    expect(r.stdout).toMatch(/^missing\s+sandbox local: isolation\s+bubblewrap \(bwrap\) is not on PATH/m);
    expect(r.stdout).toMatch(/^missing\s+algorithm nope\s+/m);
    expect(r.stdout).toMatch(/^ok\s+harness agentloop: CLI/m);
    expect(r.stdout).toContain('To install what is missing:\n  apt-get install -y bubblewrap\n  npm i -D @clawgym/algo-nope\n');
    expect(r.stderr).toContain('2 thing(s) the config needs are missing: sandbox local: isolation, algorithm nope');
    expect(r.status).toBe(1);
  });

});

describeIf(onPath('bwrap') ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'clawgym doctor where bubblewrap is installed', () => {
  it('says where it found it (JSON for scripts)', () => {
    const rows = JSON.parse(doctor(project(), process.env, ['--json']).stdout) as { status: string; what: string; detail: string }[];
    expect(rows.find((x) => x.what === 'sandbox local: isolation')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^bubblewrap at \/.+\/bwrap$/) });
    expect(rows.filter((x) => x.status === 'missing').map((x) => x.what)).toEqual(['algorithm nope']);
  });
});
