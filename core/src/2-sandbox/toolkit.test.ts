import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kernelControllers } from './cgroups';
import { killGroup, namespacePid } from './marking';
import { parseOwner, readOwnerFile, writeOwnerFile } from './owner';
import { SandboxPaths } from './paths';
import { stopWhen } from './stop';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const temp = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-toolkit-')); dirs.push(d); return d; };

describe('SandboxPaths.linkFreeHostPath (the Docker sandbox host-side file path)', () => {
  const setup = () => {
    const root = temp();
    const ws = join(root, 'ws');
    const home = join(root, 'home');
    mkdirSync(ws);
    mkdirSync(home);
    return { root, ws, home, paths: new SandboxPaths([{ inside: '/workspace', host: ws }, { inside: '/home/agent', host: home }], '/workspace') };
  };

  it('maps workspace and HOME paths, relative ones from the workspace, and nothing outside them', async () => {
    const { ws, home, paths } = setup();
    expect(await paths.linkFreeHostPath('/workspace/a.txt')).toBe(join(ws, 'a.txt'));
    expect(await paths.linkFreeHostPath('sub/b.txt')).toBe(join(ws, 'sub', 'b.txt'));
    expect(await paths.linkFreeHostPath('/home/agent/.config/c')).toBe(join(home, '.config', 'c'));
    expect(await paths.linkFreeHostPath('/etc/passwd')).toBeUndefined();
    expect(await paths.linkFreeHostPath('../../etc/passwd')).toBeUndefined();
    expect(await paths.linkFreeHostPath('/workspace-other/x')).toBeUndefined();
  });

  it('refuses a path through a link or a file, and makes missing folders only when asked', async () => {
    const { root, ws, paths } = setup();
    symlinkSync(root, join(ws, 'out'));
    symlinkSync('/etc/passwd', join(ws, 'passwd'));
    writeFileSync(join(ws, 'file'), 'x');
    expect(await paths.linkFreeHostPath('out/x')).toBeUndefined();
    expect(await paths.linkFreeHostPath('passwd')).toBeUndefined();
    expect(await paths.linkFreeHostPath('file/x')).toBeUndefined();
    const made: string[] = [];
    expect(await paths.linkFreeHostPath('a/b/c.txt')).toBe(join(ws, 'a', 'b', 'c.txt'));
    expect(made).toEqual([]);
    const mk = async (d: string) => { made.push(d); mkdirSync(d); };
    expect(await paths.linkFreeHostPath('a/b/c.txt', mk)).toBe(join(ws, 'a', 'b', 'c.txt'));
    expect(made).toEqual([join(ws, 'a'), join(ws, 'a', 'b')]);
  });
});

describe('owner files', () => {
  it('are written with this process as the owner and read back; junk reads as none', async () => {
    const dir = temp();
    await writeOwnerFile(join(dir, 'o.json'), { runId: 'r1' });
    expect(await readOwnerFile<{ runId: string }>(join(dir, 'o.json'))).toEqual({ runId: 'r1', pid: process.pid, pidStart: expect.any(String), host: expect.any(String) });
    writeFileSync(join(dir, 'bad.json'), '{"pid":');
    expect(await readOwnerFile(join(dir, 'bad.json'))).toBeUndefined();
    expect(await readOwnerFile(join(dir, 'missing.json'))).toBeUndefined();
    expect(parseOwner('[1]')).toBeUndefined();
    expect(parseOwner('null')).toBeUndefined();
    expect(parseOwner(undefined)).toBeUndefined();
  });
});

describe('kernelControllers', () => {
  it('reads the enabled column of /proc/cgroups, else the v2 root\'s controllers', () => {
    const dir = temp();
    writeFileSync(join(dir, 'cgroups'), '#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t8\t1\nmemory\t4\t67\t0\npids\t8\t9\t1\n');
    writeFileSync(join(dir, 'v2'), 'cpuset cpu io memory\n');
    expect(kernelControllers({ procCgroups: join(dir, 'cgroups') })).toEqual({ pids: true, memory: false, cpu: true });
    expect(kernelControllers({ procCgroups: join(dir, 'none'), v2Controllers: join(dir, 'v2') })).toEqual({ pids: false, memory: true, cpu: true });
    expect(kernelControllers({ procCgroups: join(dir, 'none'), v2Controllers: join(dir, 'none') })).toEqual({ pids: false, memory: false, cpu: false });
  });
});

describe('killGroup and namespacePid', () => {
  it('says gone for no such group and gives this process its own pid outside any container', () => {
    expect(killGroup(0)).toBe('gone');
    expect(killGroup(2 ** 22 + 12345)).toBe('gone');
    const inner = namespacePid(process.pid);
    expect(typeof inner).toBe('number');
    expect(namespacePid(2 ** 22 + 12345)).toBeUndefined();
  });
});

describe('stopWhen', () => {
  it('kills at the timeout and says timedOut; an abort (also before) kills without it; clear disarms', async () => {
    let kills = 0;
    const t = stopWhen({ timeoutMs: 20 }, () => { kills++; });
    await new Promise((r) => setTimeout(r, 60));
    expect({ kills, timedOut: t.timedOut }).toEqual({ kills: 1, timedOut: true });
    const ac = new AbortController();
    const a = stopWhen({ timeoutMs: 10_000, signal: ac.signal }, () => { kills++; });
    ac.abort();
    a.clear();
    expect({ kills, timedOut: a.timedOut }).toEqual({ kills: 2, timedOut: false });
    const pre = new AbortController();
    pre.abort();
    stopWhen({ signal: pre.signal }, () => { kills++; }).clear();
    expect(kills).toBe(3);
    const c = stopWhen({ timeoutMs: 20 }, () => { kills++; });
    c.clear();
    await new Promise((r) => setTimeout(r, 50));
    expect({ kills, timedOut: c.timedOut }).toEqual({ kills: 3, timedOut: false });
  });
});
