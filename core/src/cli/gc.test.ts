import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from './main';

// A runner of another project, killed with its sandbox still there: a sandbox made through the
// built local provider (bubblewrap), as a run of that project makes them.
const DIST_LOCAL = resolve(__dirname, '../../dist/2-sandbox/local.js');
const RUNNER = `
const fs = require('fs');
const path = require('path');
const [dist, root, project, socketPath] = process.argv.slice(2);
const { localSandboxProvider } = require(dist);
(async () => {
  await new Promise((r) => require('net').createServer().listen(socketPath, r));
  const p = localSandboxProvider({ root, log: () => {} });
  const sb = await p.create({ runId: 'tiny', project, rolloutId: 'r1', limits: {}, modelEndpoint: { socketPath, url: 'http://unused' } });
  void sb.exec(['sh', '-c', 'echo up > started; exec sleep 1000']);
  while (!fs.existsSync(path.join(sb.workspaceHostPath, 'started'))) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify({ dir: path.dirname(sb.workspaceHostPath) }));
  setInterval(() => {}, 1000);
})().catch((e) => { console.error(e); process.exit(1); });`;

describe('clawgym gc keeps to its project', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('leaves another project\'s dead run (same run name) alone; that project\'s own gc removes it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'clawgym-gc-root-'));
    dirs.push(root);
    const project = (name: string) => {
      const dir = mkdtempSync(join(tmpdir(), `clawgym-gc-${name}-`));
      dirs.push(dir);
      writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { name: 'tiny', sandbox: { use: 'local', options: { root: ${JSON.stringify(root)} } } };\n`);
      return dir;
    };
    const [mine, theirs] = [project('mine'), project('theirs')];
    const script = join(root, '..', `runner-${Date.now()}.js`);
    writeFileSync(script, RUNNER);
    dirs.push(script, `${script}.sock`);
    const child = spawn(process.execPath, [script, DIST_LOCAL, root, theirs, `${script}.sock`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    const line = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) done(out.split('\n')[0]!); });
      child.on('exit', () => fail(new Error(`runner exited: ${err}`)));
    });
    const { dir } = JSON.parse(line) as { dir: string };
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(dir)).toBe(true);

    const gc = async (cwd: string, ...args: string[]) => {
      let said = '';
      const io = { out: (s: string) => { said += s; }, err: (s: string) => { said += s; }, cwd };
      expect(await main(['gc', ...args], io)).toBe(0);
      return said;
    };
    const fromMine = await gc(mine);
    expect(fromMine).toContain('local: removed 0');
    expect(fromMine).toContain('`clawgym gc --all` sweeps every project\'s');
    expect(existsSync(dir)).toBe(true);
    const fromTheirs = await gc(theirs);
    expect(fromTheirs).toContain(dir);
    expect(existsSync(dir)).toBe(false);
  }, 60_000);
});
