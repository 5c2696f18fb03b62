import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuSeconds, detectCgroups } from './cgroups';
import { localSandboxProvider } from './local';
import { bubblewrapMissing, describeIf } from '../testing/harnesses';

const dirs: string[] = [];
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-usage-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('a sandbox\'s CPU seconds from its cgroups', () => {
  it('reads cgroup v2\'s cpu.stat and v1\'s cpuacct.usage, and nothing from groups that account no CPU', async () => {
    const root = tmp();
    const [v2, v1, pids] = ['v2', 'v1', 'pids'].map((n) => { const d = join(root, n); mkdirSync(d); return d; });
    writeFileSync(join(v2!, 'cpu.stat'), 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n');
    writeFileSync(join(v1!, 'cpuacct.usage'), '1250000000\n');
    writeFileSync(join(pids!, 'pids.max'), 'max\n');
    expect(await cgroupCpuSeconds([pids!, v2!])).toEqual({ cpuSeconds: 2.5, source: 'cgroup v2 cpu.stat' });
    expect(await cgroupCpuSeconds([pids!, v1!])).toEqual({ cpuSeconds: 1.25, source: 'cgroup v1 cpuacct.usage' });
    expect(await cgroupCpuSeconds([pids!])).toBeUndefined();
  });
});

const cg = detectCgroups();
const accounts = cg.pids?.version === 2 || cg.cpuacct !== undefined;
describeIf(bubblewrapMissing() ?? (accounts ? undefined : 'no cgroup here accounts CPU time (v2, or v1 cpuacct this process may create groups in)'), 'local sandbox usage', () => {
  it('counts the CPU seconds of what ran in the sandbox, not of what ran outside it', async () => {
    const provider = localSandboxProvider({ root: tmp(), warmPool: 0 });
    const socketPath = join(tmp(), 'model.sock');
    writeFileSync(socketPath, ''); // bound into the sandbox; nothing here calls the model
    const sb = await provider.create({ runId: 'usage', rolloutId: 'r1', limits: {}, modelEndpoint: { socketPath, url: 'http://unused' } });
    try {
      const idle = (await sb.usage!()).cpuSeconds!;
      // About a second of one core's work inside; a busy second outside must not count.
      const busyUntil = Date.now() + 300;
      while (Date.now() < busyUntil) { /* the test's own CPU time */ }
      const started = Date.now();
      const r = await sb.exec(['sh', '-c', 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done']);
      const wall = (Date.now() - started) / 1000;
      expect(r.exitCode).toBe(0);
      const used = (await sb.usage!()).cpuSeconds! - idle;
      expect(idle).toBeLessThan(0.3);
      expect(used).toBeGreaterThan(0.3 * wall);
      expect(used).toBeLessThanOrEqual(wall + 0.05);
    } finally {
      await sb.destroy();
      await provider.close();
    }
  }, 60_000);
});
