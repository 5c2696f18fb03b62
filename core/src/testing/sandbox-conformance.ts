/**
 * The escape suite every sandbox provider runs: from inside one sandbox, try what a hostile
 * harness would — write outside the workspace, read another sandbox's workspace or API key,
 * reach the host's loopback, signal a host process, read the runner's environment — and check
 * each attempt had no effect on the host. Call {@link describeSandboxConformance} from a jest
 * test file with a provider and a model socket (the proxy's `listenUnix`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Sandbox, SandboxProvider } from '../contracts/sandbox';

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

export interface ConformanceOptions {
  /**
   * Escapes this provider is known not to block, with why: each is then asserted to be open
   * (so the list stays true), and named so in the test title. Empty for a real sandbox.
   */
  open?: Partial<Record<Escape, string>>;
  timeoutMs?: number;
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

/**
 * Describe the escape suite for one provider (jest). `setup` runs in `beforeAll`, `teardown`
 * (if given) in `afterAll`. Each escape must be blocked, unless `options.open` names it with
 * why: then it must be open, so that list stays true.
 */
export function describeSandboxConformance(name: string, setup: () => Promise<ConformanceSetup>, options: ConformanceOptions = {}, teardown?: () => Promise<void>): void {
  const timeout = options.timeoutMs ?? 30_000;
  const open = options.open ?? {};
  describe(`sandbox conformance: ${name}`, () => {
    let lab: EscapeLab | undefined;
    beforeAll(async () => { lab = await openEscapeLab(await setup()); }, 120_000);
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
  });
}
