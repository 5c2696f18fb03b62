/**
 * The escape suite every sandbox provider runs: from inside one sandbox, try what a hostile
 * harness would — write outside the workspace, read another sandbox's workspace or API key,
 * reach the host's loopback, signal a host process, read the runner's environment — and check
 * each attempt had no effect on the host — and the limit checks: a fork loop, a big allocation, a
 * busy loop and a long sleep against the pids, memory, cpus and wall limits. Call
 * {@link describeSandboxConformance} from a jest test file with a provider and a model socket
 * (the proxy's `listenUnix`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EXEC_OUTPUT_LIMIT_BYTES, EXEC_OUTPUT_TRUNCATED, type Sandbox, type SandboxLimits, type SandboxProvider } from '../contracts/sandbox';
import { describeIf } from './harnesses';

/** What the suite needs: a provider, and the model endpoint sandboxes are given. */
export interface ConformanceSetup {
  provider: SandboxProvider;
  socketPath: string;
  url: string;
  /** Command that runs Node inside the sandbox (default `node`). */
  node?: string;
}

/** The escapes of the suite. */
export type Escape = 'write-outside' | 'read-other-workspace' | 'read-other-key' | 'host-loopback' | 'signal-host' | 'runner-env';

/** The limits the suite checks (of {@link SandboxLimits}). */
export type Limit = 'pids' | 'memory' | 'cpus' | 'wall';

/** All limits, in the order the suite checks them. */
export const LIMITS: readonly Limit[] = ['pids', 'memory', 'cpus', 'wall'];

export interface ConformanceOptions {
  /**
   * Escapes this provider is known not to block, with why: each is then asserted to be open
   * (so the list stays true), and named so in the test title. Empty for a real sandbox.
   */
  open?: Partial<Record<Escape, string>>;
  /**
   * How the provider enforces each limit on this machine, known when the test file loads (the
   * local provider's `enforcementHere()`): words, or `not enforced: <why>` where this machine
   * cannot. The cpus check is of a share (a CPU quota). A limit not enforced here, or not
   * named here or in {@link unenforced}, is a visible skip — and a failure under `CI=true`.
   */
  limits?: Partial<Record<Limit, string>>;
  /**
   * Limits this provider does not enforce on any machine, with why (the netns test kit sets
   * none): each is then asserted not to hold, so the list stays true.
   */
  unenforced?: Partial<Record<Limit, string>>;
  timeoutMs?: number;
  /**
   * Why this provider cannot place the workspace at a path a task asks for
   * (`SandboxSpec.workspacePath`): it must then refuse such a spec with SANDBOX_UNSUPPORTED.
   * Unset: it must place it there.
   */
  noWorkspacePath?: string;
}

/** A workspace path as ClawGym-Task asks for one: below a folder that images close to other users. */
export const ASKED_WORKSPACE = '/root/.openclaw/workspace';

/**
 * Check that a sandbox made with `workspacePath` has its workspace there: the default working
 * folder, host files visible at that path, files written there back on the host, and a path a
 * workspace may not take refused.
 */
async function checkWorkspacePlacement(s: ConformanceSetup, options: ConformanceOptions): Promise<void> {
  const base = { runId: `wsp${randomBytes(3).toString('hex')}`, limits: {}, modelEndpoint: { socketPath: s.socketPath, url: s.url } };
  if (options.noWorkspacePath !== undefined) {
    await expect(s.provider.create({ ...base, rolloutId: 'asked', workspacePath: ASKED_WORKSPACE })).rejects.toMatchObject({ code: 'CLAWGYM_SANDBOX_UNSUPPORTED' });
    return;
  }
  await expect(s.provider.create({ ...base, rolloutId: 'etc', workspacePath: '/etc/ws' })).rejects.toMatchObject({ code: 'CLAWGYM_SANDBOX_SPEC_INVALID' });
  const sb = await s.provider.create({ ...base, rolloutId: 'asked', workspacePath: ASKED_WORKSPACE });
  try {
    expect(sb.workspacePath).toBe(ASKED_WORKSPACE);
    mkdirSync(join(sb.workspaceHostPath, 'input'), { recursive: true });
    writeFileSync(join(sb.workspaceHostPath, 'input', 'data.csv'), 'a,b\n1,2\n');
    const script = `pwd; cat ${ASKED_WORKSPACE}/input/data.csv; mkdir -p output && echo done > ${ASKED_WORKSPACE}/output/answer.txt`;
    const r = await sb.exec(['sh', '-c', script]);
    expect({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({ exitCode: 0, stdout: `${ASKED_WORKSPACE}\na,b\n1,2\n`, stderr: '' });
    await sb.sync?.();
    expect(readFileSync(join(sb.workspaceHostPath, 'output', 'answer.txt'), 'utf8')).toBe('done\n');
    // The sandbox's own file operations use the same path.
    await sb.writeFile(`${ASKED_WORKSPACE}/reward/flag`, 'x');
    expect((await sb.exec(['cat', 'reward/flag'])).stdout).toBe('x');
  } finally {
    await sb.destroy();
  }
}

/**
 * What the suite does about one limit: `check` that it holds, check that it is `open` (the
 * provider does not enforce it by design), or nothing: then `missing` says why, and the check
 * is a visible skip on a user's machine and a failure in CI ({@link describeIf}).
 */
export type LimitCheck = { run: 'check'; how: string } | { run: 'open'; why: string } | { run: 'missing'; missing: string };

/** What the suite does about `limit` with these options (see {@link LimitCheck}). */
export function limitCheck(limit: Limit, options: Pick<ConformanceOptions, 'limits' | 'unenforced'>): LimitCheck {
  const why = options.unenforced?.[limit];
  if (why !== undefined) return { run: 'open', why };
  const how = options.limits?.[limit];
  if (how === undefined) return { run: 'missing', missing: `the provider does not say how it enforces the ${limit} limit here` };
  if (how.startsWith('not enforced')) return { run: 'missing', missing: `the ${limit} limit is ${how}` };
  return { run: 'check', how };
}

const secret = (what: string) => `${what}-${randomBytes(8).toString('hex')}`;

/** Every host process whose command line holds `text`. */
export function commandLinesHolding(text: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(text); } catch { return false; }
  }).map(Number);
}

/** Two sandboxes of one provider and the host-side bait the escapes go for. */
export interface EscapeLab {
  /** Try one escape from sandbox A: true when it got through. Throws when the probe could not run. */
  attempt(escape: Escape): Promise<boolean>;
  close(): Promise<void>;
}

/** All escapes, in the order the suite tries them. */
export const ESCAPES: readonly Escape[] = ['write-outside', 'read-other-workspace', 'read-other-key', 'host-loopback', 'signal-host', 'runner-env'];

/**
 * Set up the escape lab on `s.provider`: sandbox A (the attacker) and sandbox B (a victim with a
 * file in its workspace and a process holding its API key), a service on the host's loopback,
 * and two host processes (one with a secret in its environment, standing for the runner; one to
 * signal). Used by {@link describeSandboxConformance} and by `bench:faults`.
 */
export async function openEscapeLab(s: ConformanceSetup): Promise<EscapeLab> {
  const runnerSecret = secret('runner-env');
  const otherKey = secret('other-key');
  const otherFile = secret('other-file');
  const runId = `conf${randomBytes(3).toString('hex')}`;
  const node = s.node ?? 'node';
  const spec = (rolloutId: string) => ({ runId, rolloutId, limits: {}, modelEndpoint: { socketPath: s.socketPath, url: s.url } });
  const a: Sandbox = await s.provider.create(spec('a'));
  const b: Sandbox = await s.provider.create(spec('b'));
  await b.writeFile('secret.txt', otherFile);
  const holder = new AbortController();
  const bHolder = b.exec([node, '-e', 'setInterval(() => {}, 1000)'], { env: { ANTHROPIC_API_KEY: otherKey }, timeoutMs: 120_000, signal: holder.signal });
  const hostServer: Server = createServer((c) => { c.end('host-service\n'); });
  await new Promise<void>((r) => hostServer.listen(0, '127.0.0.1', () => r()));
  const hostPort = (hostServer.address() as { port: number }).port;
  const hostChild: ChildProcess = spawn('/bin/sleep', ['120'], { env: { PATH: '/usr/bin:/bin', CLAWGYM_RUNNER_SECRET: runnerSecret }, stdio: 'ignore' });
  const victim: ChildProcess = spawn('/bin/sleep', ['120'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300)); // b's holder is up

  /** Run a probe in A; a probe that did not run would make every escape look blocked, so it must say it ran. */
  const inA = async (code: string) => {
    const r = await a.exec([node, '-e', `${code}\n;console.log('PROBE-RAN')`], { timeoutMs: 15_000 });
    if (r.exitCode !== 0 || !r.stdout.includes('PROBE-RAN') || r.stderr !== '') throw new Error(`the escape probe did not run (exit ${r.exitCode}): ${r.stderr.slice(0, 500)}`);
    return r;
  };
  const probes: Record<Escape, () => Promise<boolean>> = {
    'write-outside': async () => {
      const targets = [join(tmpdir(), `${secret('escape')}.txt`), join(dirname(a.workspaceHostPath), `${secret('escape')}.txt`), `/etc/${secret('escape')}`, `/root/${secret('escape')}`];
      await inA(`for (const t of ${JSON.stringify(targets)}) { try { require('fs').writeFileSync(t, 'x'); } catch {} }`);
      const landed = targets.filter((t) => existsSync(t));
      for (const t of landed) rmSync(t, { force: true });
      return landed.length > 0;
    },
    'read-other-workspace': async () => {
      const r = await inA(`const fs = require('fs'); const out = [];
        for (const p of ${JSON.stringify([join(b.workspaceHostPath, 'secret.txt'), `${b.workspacePath}/secret.txt`])}) { try { out.push(fs.readFileSync(p, 'utf8')); } catch {} }
        console.log(out.join('\\n'));`);
      return r.stdout.includes(otherFile);
    },
    'read-other-key': async () => {
      const r = await inA(`const fs = require('fs'); let out = '';
        for (const d of fs.readdirSync('/proc')) { for (const f of ['environ', 'cmdline']) { try { out += fs.readFileSync('/proc/' + d + '/' + f, 'latin1'); } catch {} } }
        console.log(out);`);
      // Nor on the host: a key on any command line is readable by every user (ps).
      return r.stdout.includes(otherKey) || commandLinesHolding(otherKey).length > 0;
    },
    'host-loopback': async () => {
      const r = await inA(`const s = require('net').connect(${hostPort}, '127.0.0.1');
        const t = setTimeout(() => { console.log('unreachable (timeout)'); s.destroy(); }, 3000);
        s.on('data', (d) => { console.log('got ' + d); clearTimeout(t); s.destroy(); }); s.on('error', () => { console.log('unreachable'); clearTimeout(t); });`);
      return r.stdout.includes('host-service');
    },
    'signal-host': async () => {
      await inA(`try { process.kill(${victim.pid}, 'SIGKILL'); } catch {}`);
      await new Promise((r) => setTimeout(r, 200));
      return victim.exitCode !== null || victim.signalCode !== null;
    },
    'runner-env': async () => {
      const r = await inA(`const fs = require('fs'); let out = JSON.stringify(process.env);
        for (const d of fs.readdirSync('/proc')) { try { out += fs.readFileSync('/proc/' + d + '/environ', 'latin1'); } catch {} }
        console.log(out);`);
      return r.stdout.includes(runnerSecret);
    },
  };
  return {
    attempt: (escape) => probes[escape](),
    async close() {
      hostChild.kill('SIGKILL');
      victim.kill('SIGKILL');
      await new Promise<void>((r) => hostServer.close(() => r()));
      holder.abort(); // not every provider's destroy() stops what still runs (the netns test kit's does not)
      await a.destroy();
      await b.destroy();
      await bHolder.catch(() => undefined);
    },
  };
}

const TITLES: Record<Escape, string> = {
  'write-outside': 'writing outside the workspace and HOME',
  'read-other-workspace': 'reading another sandbox\'s workspace',
  'read-other-key': 'reading another sandbox\'s API key (its processes\' environment, any command line)',
  'host-loopback': 'reaching a service on the host\'s loopback',
  'signal-host': 'signalling a host process',
  'runner-env': 'reading the runner\'s environment',
};

const LIMIT_TITLES: Record<Limit, string> = {
  pids: 'a fork loop is stopped by the process limit',
  memory: 'a big allocation is stopped by the memory limit',
  cpus: 'a busy loop gets no more than its CPU share',
  wall: 'a long sleep is killed at the wall-clock limit (and so is what starts later)',
};

/** Each limit's check: `open` asserts the limit does not hold instead. */
const LIMIT_PROBES: Record<Limit, (sandbox: (limits: SandboxLimits) => Promise<Sandbox>, open: boolean, node: string) => Promise<void>> = {
  async pids(sandbox, open) {
    const sb = await sandbox({ pids: 48 });
    const r = await sb.exec(['sh', '-c', 'n=0; while [ $n -lt 200 ]; do sleep 2 >/dev/null 2>&1 & n=$((n+1)); done; echo started $n'], { timeoutMs: 20_000 });
    if (open) { expect(r.stdout).toContain('started 200'); return; }
    expect(r.stdout).not.toContain('started 200');
    expect(r.exitCode).not.toBe(0);
  },
  async memory(sandbox, open, node) {
    const sb = await sandbox({ memoryMb: 160 });
    const alloc = (mb: number) => sb.exec([node, '-e', `console.log('allocated', Buffer.alloc(${mb} * 1024 * 1024, 1).length)`], { timeoutMs: 20_000 });
    expect((await alloc(20)).stdout).toContain('allocated');
    const big = await alloc(600);
    if (open) { expect(big.stdout).toContain('allocated'); return; }
    expect(big.stdout).not.toContain('allocated');
    expect(big.exitCode).not.toBe(0);
    expect(big.timedOut).toBe(false);
  },
  async cpus(sandbox, open, node) {
    const sb = await sandbox({ cpus: 0.2 });
    const r = await sb.exec([node, '-e', 'const t = Date.now(); while (Date.now() - t < 1500); const u = process.cpuUsage(); console.log((u.user + u.system) / 1e6)'], { timeoutMs: 20_000 });
    const share = Number(r.stdout.trim()) / 1.5;
    expect(share).toBeGreaterThan(0);
    // Unlimited: ~1 on an idle core; held to 0.2 it stays well under 0.6.
    if (open) expect(share).toBeGreaterThan(0.3);
    else expect(share).toBeLessThan(0.6);
  },
  async wall(sandbox, open) {
    if (open) {
      const sb = await sandbox({ wallMs: 300 });
      const r = await sb.exec(['sleep', '1']);
      expect({ exitCode: r.exitCode, timedOut: r.timedOut }).toEqual({ exitCode: 0, timedOut: false });
      return;
    }
    const sb = await sandbox({ wallMs: 1500 });
    const r = await sb.exec(['sleep', '100']);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).not.toBe(0);
    const later = await sb.exec(['true']);
    expect(later.timedOut).toBe(true);
  },
};

/** Register the limit checks (inside a describe whose `beforeAll` made `setup()` available). */
function limitTests(setup: () => ConformanceSetup, options: ConformanceOptions): void {
  const timeout = Math.max(options.timeoutMs ?? 30_000, 30_000);
  const runId = `lim${randomBytes(3).toString('hex')}`;
  for (const limit of LIMITS) {
    const c = limitCheck(limit, options);
    describeIf(c.run === 'missing' ? c.missing : undefined, `limit ${limit}`, () => {
      const title = c.run === 'open' ? `${LIMIT_TITLES[limit]}: NOT ENFORCED (${c.why})` : `${LIMIT_TITLES[limit]}: enforced by ${c.run === 'check' ? c.how : ''}`;
      it(title, async () => {
        const s = setup();
        const made: Sandbox[] = [];
        const sandbox = async (limits: SandboxLimits) => {
          const sb = await s.provider.create({ runId, rolloutId: `${limit}${made.length}`, limits, modelEndpoint: { socketPath: s.socketPath, url: s.url } });
          made.push(sb);
          return sb;
        };
        try {
          await LIMIT_PROBES[limit](sandbox, c.run === 'open', s.node ?? 'node');
        } finally {
          for (const sb of made) await sb.destroy();
        }
      }, timeout);
    });
  }
}

/**
 * Only the limit checks of the suite, for one provider (jest): `setup` in `beforeAll`,
 * `teardown` (if given) in `afterAll`. What {@link describeSandboxConformance} runs after the
 * escapes.
 */
export function describeLimitConformance(name: string, setup: () => Promise<ConformanceSetup>, options: ConformanceOptions = {}, teardown?: () => Promise<void>): void {
  describe(`sandbox limits: ${name}`, () => {
    let s: ConformanceSetup | undefined;
    beforeAll(async () => { s = await setup(); }, 120_000);
    afterAll(async () => { await teardown?.(); }, 60_000);
    limitTests(() => s!, options);
  });
}

/**
 * Describe the suite for one provider (jest): the escapes, then the limits. `setup` runs in
 * `beforeAll`, `teardown` (if given) in `afterAll`. Each escape must be blocked, unless
 * `options.open` names it with why: then it must be open, so that list stays true. Each limit
 * must hold where `options.limits` says how it is enforced (see {@link limitCheck}).
 */
export function describeSandboxConformance(name: string, setup: () => Promise<ConformanceSetup>, options: ConformanceOptions = {}, teardown?: () => Promise<void>): void {
  const timeout = options.timeoutMs ?? 30_000;
  const open = options.open ?? {};
  describe(`sandbox conformance: ${name}`, () => {
    let s: ConformanceSetup | undefined;
    let lab: EscapeLab | undefined;
    beforeAll(async () => { s = await setup(); lab = await openEscapeLab(s); }, 120_000);
    afterAll(async () => {
      await lab?.close();
      await teardown?.();
    }, 60_000);
    for (const escape of ESCAPES) {
      const why = open[escape];
      it(why ? `${TITLES[escape]}: OPEN (${why})` : `${TITLES[escape]}: blocked`, async () => {
        const escaped = await lab!.attempt(escape);
        expect({ escape, escaped }).toEqual({ escape, escaped: why !== undefined });
      }, timeout);
    }
    it(`keeps at most ${EXEC_OUTPUT_LIMIT_BYTES >> 20} MiB of each output stream of a command, and says it cut the rest`, async () => {
      const sb = await s!.provider.create({ runId: `out${randomBytes(3).toString('hex')}`, rolloutId: 'flood', limits: {}, modelEndpoint: { socketPath: s!.socketPath, url: s!.url } });
      try {
        // 40 MiB on stdout and 20 MiB on stderr; a small write after it is not marked as cut.
        const flood = 'const b = Buffer.alloc(1 << 20, 97); for (let i = 0; i < 40; i++) process.stdout.write(b); for (let i = 0; i < 20; i++) process.stderr.write(b);';
        const r = await sb.exec([s!.node ?? 'node', '-e', flood], { timeoutMs: 60_000 });
        expect(r.exitCode).toBe(0);
        for (const stream of [r.stdout, r.stderr]) {
          expect(stream.endsWith(EXEC_OUTPUT_TRUNCATED)).toBe(true);
          const kept = stream.slice(0, -EXEC_OUTPUT_TRUNCATED.length);
          expect(kept.length).toBeLessThanOrEqual(EXEC_OUTPUT_LIMIT_BYTES);
          expect(kept.length).toBeGreaterThan(EXEC_OUTPUT_LIMIT_BYTES - (1 << 20));
          expect(/^a*$/.test(kept)).toBe(true);
        }
        expect(await sb.exec(['sh', '-c', 'echo hi; echo there >&2'])).toMatchObject({ exitCode: 0, stdout: 'hi\n', stderr: 'there\n' });
      } finally {
        await sb.destroy();
      }
    }, Math.max(timeout, 90_000));
    it(options.noWorkspacePath === undefined ? `places the workspace at a path the task asks for (${ASKED_WORKSPACE})` : `refuses a workspace path it cannot honour (${options.noWorkspacePath})`, async () => {
      await checkWorkspacePlacement(s!, options);
    }, Math.max(timeout, 60_000));
    limitTests(() => s!, options);
  });
}
