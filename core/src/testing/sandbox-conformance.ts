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

/**
 * Describe the escape suite for one provider. `setup` runs in `beforeAll`, `teardown` (if
 * given) in `afterAll`.
 */
export function describeSandboxConformance(name: string, setup: () => Promise<ConformanceSetup>, options: ConformanceOptions = {}, teardown?: () => Promise<void>): void {
  const timeout = options.timeoutMs ?? 30_000;
  const open = options.open ?? {};
  describe(`sandbox conformance: ${name}`, () => {
    let s: ConformanceSetup;
    let a: Sandbox;
    let b: Sandbox;
    let hostServer: Server;
    let hostPort = 0;
    let hostChild: ChildProcess;
    let victim: ChildProcess;
    const runnerSecret = secret('runner-env');
    const otherKey = secret('other-key');
    const otherFile = secret('other-file');
    const runId = `conf${randomBytes(3).toString('hex')}`;
    let bHolder: Promise<unknown> | undefined;
    const node = () => s.node ?? 'node';
    /** Run a probe in sandbox A; a probe that did not run would make every escape look blocked, so it must say it ran. */
    const inA = async (code: string) => {
      const r = await a.exec([node(), '-e', `${code}\n;console.log('PROBE-RAN')`], { timeoutMs: 15_000 });
      expect({ exitCode: r.exitCode, ran: r.stdout.includes('PROBE-RAN'), stderr: r.stderr }).toEqual({ exitCode: 0, ran: true, stderr: '' });
      return r;
    };

    beforeAll(async () => {
      s = await setup();
      const spec = (rolloutId: string) => ({ runId, rolloutId, limits: {}, modelEndpoint: { socketPath: s.socketPath, url: s.url } });
      a = await s.provider.create(spec('a'));
      b = await s.provider.create(spec('b'));
      // The other sandbox: a file in its workspace, and a process holding its key in its environment.
      await b.writeFile('secret.txt', otherFile);
      bHolder = b.exec([node(), '-e', 'setInterval(() => {}, 1000)'], { env: { ANTHROPIC_API_KEY: otherKey }, timeoutMs: 60_000 });
      hostServer = createServer((c) => { c.end('host-service\n'); });
      await new Promise<void>((r) => hostServer.listen(0, '127.0.0.1', () => r()));
      hostPort = (hostServer.address() as { port: number }).port;
      // Stands for the runner: a host process with a secret in its environment.
      hostChild = spawn('/bin/sleep', ['120'], { env: { PATH: '/usr/bin:/bin', CLAWGYM_RUNNER_SECRET: runnerSecret }, stdio: 'ignore' });
      victim = spawn('/bin/sleep', ['120'], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 300)); // b's holder is up
    }, 120_000);

    afterAll(async () => {
      hostChild?.kill('SIGKILL');
      victim?.kill('SIGKILL');
      await new Promise<void>((r) => (hostServer ? hostServer.close(() => r()) : r()));
      await a?.destroy();
      await b?.destroy();
      await bHolder?.catch(() => undefined);
      await teardown?.();
    }, 60_000);

    const check = (escape: Escape, title: string, attempt: () => Promise<boolean>) => {
      const why = open[escape];
      it(why ? `${title}: OPEN (${why})` : `${title}: blocked`, async () => {
        const escaped = await attempt();
        expect({ escape, escaped }).toEqual({ escape, escaped: why !== undefined });
      }, timeout);
    };

    check('write-outside', 'writing outside the workspace and HOME', async () => {
      const targets = [join(tmpdir(), `${secret('escape')}.txt`), join(dirname(a.workspaceHostPath), `${secret('escape')}.txt`), `/etc/${secret('escape')}`, `/root/${secret('escape')}`];
      await inA(`for (const t of ${JSON.stringify(targets)}) { try { require('fs').writeFileSync(t, 'x'); } catch {} }`);
      const landed = targets.filter((t) => existsSync(t));
      for (const t of landed) rmSync(t, { force: true });
      return landed.length > 0;
    });

    check('read-other-workspace', 'reading another sandbox\'s workspace', async () => {
      const r = await inA(`const fs = require('fs'); const out = [];
        for (const p of ${JSON.stringify([join(b.workspaceHostPath, 'secret.txt'), `${b.workspacePath}/secret.txt`])}) { try { out.push(fs.readFileSync(p, 'utf8')); } catch {} }
        console.log(out.join('\\n'));`);
      return r.stdout.includes(otherFile);
    });

    check('read-other-key', 'reading another sandbox\'s API key (its processes\' environment, any command line)', async () => {
      const r = await inA(`const fs = require('fs'); let out = '';
        for (const d of fs.readdirSync('/proc')) { for (const f of ['environ', 'cmdline']) { try { out += fs.readFileSync('/proc/' + d + '/' + f, 'latin1'); } catch {} } }
        console.log(out);`);
      // Nor on the host: a key on any command line is readable by every user (ps).
      return r.stdout.includes(otherKey) || commandLinesHolding(otherKey).length > 0;
    });

    check('host-loopback', 'reaching a service on the host\'s loopback', async () => {
      const r = await inA(`const s = require('net').connect(${hostPort}, '127.0.0.1');
        const t = setTimeout(() => { console.log('unreachable (timeout)'); s.destroy(); }, 3000);
        s.on('data', (d) => { console.log('got ' + d); clearTimeout(t); s.destroy(); }); s.on('error', () => { console.log('unreachable'); clearTimeout(t); });`);
      return r.stdout.includes('host-service');
    });

    check('signal-host', 'signalling a host process', async () => {
      await inA(`try { process.kill(${victim.pid}, 'SIGKILL'); } catch {}`);
      await new Promise((r) => setTimeout(r, 200));
      return victim.exitCode !== null || victim.signalCode !== null;
    });

    check('runner-env', 'reading the runner\'s environment', async () => {
      const r = await inA(`const fs = require('fs'); let out = JSON.stringify(process.env);
        for (const d of fs.readdirSync('/proc')) { try { out += fs.readFileSync('/proc/' + d + '/environ', 'latin1'); } catch {} }
        console.log(out);`);
      return r.stdout.includes(runnerSecret);
    });
  });
}
