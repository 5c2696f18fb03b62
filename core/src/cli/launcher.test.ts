import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { clawgym, until } from './__fixtures__/tiny-project';

// The launcher's hand-over from an older Node (Debian 12's Node 20) to the project's Node 24, on
// the machine's own old Node: signals sent to the launcher's PID by a program, and its death.
const oldNode = '/usr/bin/node';
const major = existsSync(oldNode) ? Number(spawnSync(oldNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) : 0;
const withOldNode = major > 0 && major < 22 ? describe : describe.skip;
if (!(major > 0 && major < 22)) console.warn(`launcher tests skipped: ${oldNode} is ${major ? `Node ${major}` : 'missing'}, not a Node below 22`);

const childrenOf = (pid: number): number[] => {
  try { return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; }
};
const aliveNow = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

withOldNode('clawgym launcher on Node < 22 (the built CLI)', () => {
  const dirs: string[] = [];
  const leftovers: number[] = [];
  afterAll(() => {
    for (const pid of leftovers) if (aliveNow(pid)) process.kill(pid, 'SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-launcher-'));
    dirs.push(dir);
    symlinkSync(resolve(__dirname, '../../../node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), '{"name":"launcher-test","private":true}');
    writeFileSync(join(dir, 'clawgym.config.mjs'), 'export default { run: { outDir: "runs" } };\n');
    return dir;
  }

  async function serveOnOldNode(name: string) {
    const dir = project();
    const s = clawgym(dir, ['serve', '--engine', 'scripted', '--port', '0', '--name', name], { node: oldNode });
    await until(() => s.output().includes('Press Ctrl-C'), 60_000, 'serve to start');
    const [child] = childrenOf(s.child.pid!);
    expect(child).toBeGreaterThan(0);
    leftovers.push(child!);
    return { ...s, dir, node24: child! };
  }

  it('passes a SIGINT sent to its PID by a program on to `serve`, which stops cleanly with its summary', async () => {
    const s = await serveOnOldNode('by-signal');
    const base = /ANTHROPIC_BASE_URL=(\S+)/.exec(s.output())![1]!;
    const key = /ANTHROPIC_API_KEY=(\S+)/.exec(s.output())![1]!;
    const answer = await fetch(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(answer.status).toBe(200);
    s.child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'still running'>((r) => { timer = setTimeout(() => r('still running'), 15_000); });
    const exit = await Promise.race([s.exited, timeout]);
    clearTimeout(timer);
    expect(exit).toMatchObject({ code: 0 });
    expect(s.output()).toContain('SIGINT: stopping');
    // Once: a single SIGINT stops cleanly; a doubled one would have forced the exit.
    expect(s.output()).not.toContain('again: forced exit');
    expect(s.output()).toContain('stopped. 1 calls');
    expect(aliveNow(s.node24)).toBe(false);
  }, 90_000);

  it('takes its child along when it is killed with SIGKILL: the child is gone within seconds', async () => {
    const s = await serveOnOldNode('by-kill');
    const launcherGone = new Promise((r) => s.child.on('exit', r));
    s.child.kill('SIGKILL');
    await launcherGone;
    const killed = Date.now();
    await until(() => !aliveNow(s.node24) || Date.now() - killed > 15_000, 20_000, 'the child');
    expect({ alive: aliveNow(s.node24), seconds: Math.round((Date.now() - killed) / 1000) }).toEqual({ alive: false, seconds: expect.any(Number) });
    expect(Date.now() - killed).toBeLessThan(10_000);
  }, 90_000);
});
