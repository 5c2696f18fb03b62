import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '../testing';

const bin = resolve(__dirname, '../../bin/clawgym.js');
const without = resolve(__dirname, '../../../scripts/without-commands.sh');
afterAll(removeTempProjects);

const project = () => tempProject({ 'clawgym.config.mjs': "export default { algorithm: 'nope' };\n" }, 'clawgym-doctor-');
const doctor = (cwd: string, args: string[] = [], hide: string[] = []) =>
  spawnSync(hide.length ? without : process.execPath, [...(hide.length ? [...hide, '--', process.execPath] : []), bin, 'doctor', ...args], { cwd, encoding: 'utf8', timeout: 60_000 });

// A machine without bubblewrap, made by hiding it in a mount namespace of the test's own.
const hiding = spawnSync(without, ['bwrap', '--', 'true'], { encoding: 'utf8' });
describeIf(hiding.status === 0 ? undefined : `cannot hide programs in a mount namespace here: ${hiding.stderr.trim()}`, 'clawgym doctor (built, as a user runs it)', () => {
  it('on a machine missing bubblewrap names it and the command that installs it, and a missing plugin no ClawGym package provides without an npm install to run; exits 1', () => {
    const r = doctor(project(), [], ['bwrap']);
    expect(r.stdout).toMatch(/^missing\s+sandbox local: isolation\s+bubblewrap \(bwrap\) is not installed: the local sandbox refuses/m);
    expect(r.stdout).toMatch(/^missing\s+algorithm nope\s+/m);
    expect(r.stdout).toMatch(/^ok\s+harness agentloop: CLI/m);
    expect(r.stdout).toContain('To install what is missing (or run clawgym doctor --fix):\n  apt-get install -y bubblewrap\n');
    expect(r.stdout).not.toContain('npm i -D'); // @clawgym/algo-nope exists on no registry
    expect(r.stderr).toContain('2 thing(s) the config needs are missing: sandbox local: isolation, algorithm nope');
    expect(r.status).toBe(1);
  });

});

describeIf(bubblewrapMissing(), 'clawgym doctor where bubblewrap is installed', () => {
  it('says which bubblewrap it started a sandbox with, and where, and how the disk limit is kept (JSON for scripts)', () => {
    const rows = JSON.parse(doctor(project(), ['--json']).stdout) as { status: string; what: string; detail: string }[];
    // As root the default 1 GiB is a tmpfs per sandbox; otherwise doctor says it is not enforced, and why.
    const disk = process.getuid?.() === 0 ? 'tmpfs of 1 GiB for workspace, HOME and /tmp \\(ENOSPC past it\\)' : 'not enforced: mounting a size-limited tmpfs needs root';
    expect(rows.find((x) => x.what === 'sandbox local: isolation')).toMatchObject({ status: 'ok', detail: expect.stringMatching(new RegExp(`^bubblewrap \\d+\\.\\d+\\.\\d+ at /.+/bwrap; disk limit ${disk}$`)) });
    expect(rows.filter((x) => x.status === 'missing').map((x) => x.what)).toEqual(['algorithm nope']);
  });
});
