import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, removeTempProjects, tempProject } from '../testing';

const bin = resolve(__dirname, '../../bin/clawgym.js');
afterAll(removeTempProjects);

// OpenCode, Gemini CLI and Pi: each harness's check as `clawgym doctor` reports it (each row names
// the CLI and where it is, or what is wrong and the command that installs it).
const opencode = harnessE2ePrerequisites('opencode');
describeIf(opencode.missing, 'clawgym doctor on the OpenCode, Gemini CLI and Pi harnesses', () => {
  it('finds a CLI at its configured bin, names a bin that is not there, and one not installed, with the install command; exits 1', () => {
    const harnesses = [
      { use: 'opencode', options: { bin: 'bin' in opencode.cli ? opencode.cli.bin : '' } },
      { use: 'gemini-cli', options: { bin: '/nonexistent/gemini.js' } },
      { use: 'pi' },
    ];
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify(harnesses)} };\n` }, 'clawgym-doctor-harnesses-');
    const r = spawnSync(process.execPath, [bin, 'doctor', '--json'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const rows = JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    const row = (what: string) => rows.find((x) => x.what === what);
    expect(row('harness opencode: CLI')).toMatchObject({ status: 'ok', detail: `OpenCode at ${'bin' in opencode.cli ? opencode.cli.bin : ''}` });
    expect(row('harness gemini-cli: CLI')).toMatchObject({ status: 'missing', detail: 'Gemini CLI: bin "/nonexistent/gemini.js" is not an executable file' });
    // No bin given, and the package cannot be resolved from the project (a project of one's own,
    // without the repository's install script): not installed, and npm installs it into the project.
    expect(row('harness pi: CLI')).toMatchObject({ status: 'missing', detail: expect.stringContaining('@mariozechner/pi-coding-agent is not found'), install: 'npm i -D @mariozechner/pi-coding-agent' });
    expect(r.status).toBe(1);
  });
});
