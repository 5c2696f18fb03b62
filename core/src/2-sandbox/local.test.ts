import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Sandbox, SandboxSpec } from '../contracts/sandbox';
import { bubblewrapMissing, describeIf, outcomeWhenMissing } from '../testing/harnesses';
import { commandLinesHolding } from '../testing/sandbox-conformance';
import { startScriptedProxy } from '../testing/scripted-proxy';
import { localSandboxProvider, SANDBOX_MARKER_ENV, type LocalSandboxProvider } from './local';
import { netnsAvailable } from './netns';

const DIST_LOCAL = resolve(__dirname, '..', '..', 'dist', '2-sandbox', 'local.js');
const REPLY = 'pong from the policy';

/** Host pids whose environment carries the sandbox's marker (an independent look at /proc). */
function markedPids(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`${SANDBOX_MARKER_ENV}=${dir}`)) out.push(Number(name));
    } catch { /* gone or not ours */ }
  }
  return out;
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}

const sandboxDir = (sb: Sandbox) => dirname(sb.workspaceHostPath);
const ownerCgroups = (sb: Sandbox): string[] => JSON.parse(readFileSync(join(sandboxDir(sb), 'owner.json'), 'utf8')).cgroups;

/** `it`, or a visible skip when the machine cannot do it — except in CI, where it fails (as `describeIf`). */
function itIf(missing: string | undefined, name: string, fn: () => Promise<void>, timeout?: number): void {
  const outcome = outcomeWhenMissing(missing);
  if (outcome === 'skip') {
    // eslint-disable-next-line no-console
    console.warn(`skipping "${name}": ${missing}`);
    it.skip(`${name} (skipped: ${missing})`, fn);
  } else if (outcome === 'fail') {
    it(name, () => { throw new Error(`required in CI: ${missing}`); });
  } else {
    it(name, fn, timeout);
  }
}

const NODE_CONNECT = `
const net = require('net');
const hosts = process.argv.slice(1);
let left = hosts.length;
const done = (msg) => { console.log(msg); if (--left === 0) process.exit(0); };
for (const host of hosts) {
  const s = net.connect({ host, port: Number(process.env.PORT) });
  s.setTimeout(2000);
  s.on('connect', () => { s.destroy(); done('connected ' + host); });
  s.on('error', (e) => done('failed ' + host + ' ' + e.code));
  s.on('timeout', () => { s.destroy(); done('failed ' + host + ' timeout'); });
}`;

const NODE_CHAT = `
fetch(process.env.BASE + '/v1/chat/completions', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.KEY, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'clawgym-policy', messages: [{ role: 'user', content: 'ping' }] }),
}).then((r) => r.json()).then((j) => console.log(j.choices[0].message.content), (e) => { console.error(e); process.exit(1); });`;

const NODE_CHAT_SOCKET = `
const body = JSON.stringify({ model: 'clawgym-policy', messages: [{ role: 'user', content: 'ping' }] });
const req = require('http').request({ socketPath: process.env.SOCK, path: process.env.PATHNAME + '/v1/chat/completions', method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.KEY, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
  let t = ''; res.on('data', (c) => { t += c; }); res.on('end', () => console.log(JSON.parse(t).choices[0].message.content));
});
req.on('error', (e) => { console.error(e); process.exit(1); });
req.end(body);`;

/** STREAMS connections to 127.0.0.1:4141 at once, BYTES each (patterned), half-closed; each must echo back the same. */
const NODE_ECHO = `
const net = require('net');
const n = Number(process.env.STREAMS), size = Number(process.env.BYTES);
const results = [];
for (let i = 0; i < n; i++) results.push(new Promise((done) => {
  const out = Buffer.alloc(size); for (let j = 0; j < size; j++) out[j] = (j * 7 + i) & 255;
  const got = [];
  const s = net.connect(4141, '127.0.0.1', () => s.end(out));
  s.on('data', (d) => got.push(d));
  s.on('error', (e) => done('stream ' + i + ' ' + e.code));
  s.on('end', () => done('stream ' + i + (Buffer.concat(got).equals(out) ? ' ok' : ' differs (' + Buffer.concat(got).length + ' bytes)')));
}));
Promise.all(results).then((r) => console.log(r.join('\\n')));`;

const RUNNER = `
const fs = require('fs');
const path = require('path');
const [dist, root, mode, socketPath, holder] = process.argv.slice(2);
const { localSandboxProvider } = require(dist);
(async () => {
  const p = localSandboxProvider({ root, forceFallback: mode === 'fallback', holder: holder === 'true', allowUnisolated: true, log: () => {} });
  const sb = await p.create({ runId: 'killed', rolloutId: 'r1', limits: {}, modelEndpoint: { socketPath, url: 'http://unused' } });
  void sb.exec(['sh', '-c', 'echo up > started; exec sleep 1000']);
  while (!fs.existsSync(path.join(sb.workspaceHostPath, 'started'))) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify({ dir: path.dirname(sb.workspaceHostPath) }));
  setInterval(() => {}, 1000);
})().catch((e) => { console.error(e); process.exit(1); });`;

function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

/** The suite for one mode; `holder: false` makes bubblewrap start once per command (the holder is the default). */
function suite(mode: 'bubblewrap' | 'fallback', holder = true) {
  const fallback = mode === 'fallback';
  const netMissing = fallback ? netnsAvailable().reason : undefined;
  let root: string;
  let provider: LocalSandboxProvider;
  let logged: string[];
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath: string;
  const sandboxes: Sandbox[] = [];
  let n = 0;

  const create = async (over: Partial<SandboxSpec> = {}) => {
    const sb = await provider.create({
      runId: 'run1', rolloutId: `r${++n}`, limits: {}, modelEndpoint: { socketPath, url: `${proxy.url}/s/r${n}` }, ...over,
    });
    sandboxes.push(sb);
    return sb;
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `clawgym-local-${mode}-`));
    logged = [];
    provider = localSandboxProvider({ root, forceFallback: fallback, holder, allowUnisolated: true, log: (m) => logged.push(m) });
    proxy = await startScriptedProxy(() => ({ text: REPLY }));
    socketPath = join(mkdtempSync(join(tmpdir(), 'clawgym-sock-')), 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  });

  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.destroy()));
    await provider.close();
    await proxy.close();
    for (const d of [root, proxy.dir, dirname(socketPath)]) await rm(d, { recursive: true, force: true });
  });

  it(`runs in ${mode} mode and says so`, async () => {
    expect(await provider.mode()).toBe(mode);
    const held = !fallback && holder && process.getuid?.() === 0;
    expect(await provider.usesHolder()).toBe(held);
    const line = await provider.describeIsolation();
    expect(line).not.toContain('\n');
    if (fallback) {
      expect(line).toMatch(/NO filesystem isolation/);
      await create();
      expect(logged.join('\n')).toMatch(/WITHOUT FILESYSTEM ISOLATION/);
      expect(logged.join('\n')).toContain('apt-get install bubblewrap');
    } else {
      expect(line).toMatch(/^bubblewrap/);
      expect(line).toContain(held ? 'one holder process per sandbox' : 'one bubblewrap per command');
      await create();
      expect(logged.join('\n')).not.toMatch(/WITHOUT FILESYSTEM ISOLATION/);
    }
  });

  it('writes to the workspace land on the host; HOME and TMPDIR are writable; the env is scrubbed', async () => {
    process.env.CLAWGYM_TEST_HOST_SECRET = 'hunter2';
    try {
      const sb = await create({ env: { FROM_SPEC: 'spec' } });
      const r = await sb.exec(['sh', '-c', 'echo hello > out.txt && echo h > "$HOME/h" && echo t > "$TMPDIR/t" && pwd && env'], { env: { FROM_EXEC: 'exec' } });
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(readFileSync(join(sb.workspaceHostPath, 'out.txt'), 'utf8')).toBe('hello\n');
      expect(r.stdout.split('\n')[0]).toBe(sb.workspacePath);
      expect(r.stdout).toContain(`HOME=${sb.homePath}\n`);
      expect(r.stdout).toContain('FROM_SPEC=spec\n');
      expect(r.stdout).toContain('FROM_EXEC=exec\n');
      expect(r.stdout).not.toContain('hunter2');
      expect(existsSync(join(dirname(sb.workspaceHostPath), 'home', 'h'))).toBe(true);
      expect(existsSync(join(dirname(sb.workspaceHostPath), 'home', 'tmp', 't'))).toBe(true);
      if (!fallback) {
        expect(sb.workspacePath).toBe('/workspace');
        expect(sb.homePath).toBe('/home/agent');
      }
    } finally {
      delete process.env.CLAWGYM_TEST_HOST_SECRET;
    }
  });

  if (!fallback) {
    it('writes outside the workspace and HOME fail and never reach the host', async () => {
      const sb = await create();
      const repoFile = join(__dirname, `escape-${process.pid}.txt`);
      const distFile = join(dirname(DIST_LOCAL), `escape-${process.pid}.txt`);
      for (const target of ['/etc/clawgym-escape', '/usr/clawgym-escape', '/clawgym-escape', repoFile, distFile]) {
        const r = await sb.exec(['sh', '-c', 'echo x > "$0"', target]);
        expect([target, r.exitCode === 0]).toEqual([target, false]);
        expect(r.stderr).toMatch(/Read-only file system|No such file or directory|Directory nonexistent|Permission denied/);
      }
      for (const host of ['/etc/clawgym-escape', '/usr/clawgym-escape', '/clawgym-escape', repoFile, distFile]) expect(existsSync(host)).toBe(false);
      // The host's password hashes are hidden even though root inside is root outside.
      const shadow = await sb.exec(['cat', '/etc/shadow']);
      expect(shadow.stdout).toBe('');
    });

    it('readOnlyPaths are visible at the same path, read-only; cwd may be relative', async () => {
      const tool = mkdtempSync(join(tmpdir(), 'clawgym-tool-'));
      await writeFile(join(tool, 'hello.sh'), '#!/bin/sh\necho "hello from $(pwd)"\n', { mode: 0o755 });
      try {
        const without = await create();
        expect((await without.exec([join(tool, 'hello.sh')])).exitCode).not.toBe(0);
        const sb = await create({ readOnlyPaths: [tool, '/no/such/path'] });
        await sb.writeFile('sub/.keep', '');
        const r = await sb.exec([join(tool, 'hello.sh')], { cwd: 'sub' });
        expect(r.stdout).toBe('hello from /workspace/sub\n');
        const w = await sb.exec(['sh', '-c', 'echo x > "$0"', join(tool, 'new.txt')]);
        expect(w.stderr).toMatch(/Read-only file system/);
        expect(existsSync(join(tool, 'new.txt'))).toBe(false);
      } finally {
        await rm(tool, { recursive: true, force: true });
      }
    });
  }

  if (!fallback) {
    it('each command runs in namespaces of its own, with no capabilities and no way to gain any', async () => {
      const kinds = ['user', 'mnt', 'net', 'pid', 'ipc', 'uts', 'cgroup'];
      const sb = await create();
      const script = `for k in ${kinds.join(' ')}; do echo "$k $(readlink /proc/self/ns/$k)"; done; grep -E '^(Cap|NoNewPrivs)' /proc/self/status`;
      const r = await sb.exec(['sh', '-c', script]);
      expect(r.stderr).toBe('');
      for (const k of kinds) {
        const inside = new RegExp(`^${k} (.+)$`, 'm').exec(r.stdout)?.[1];
        expect([k, inside]).toEqual([k, expect.stringMatching(/^\w+:\[\d+\]$/)]);
        expect([k, inside]).not.toEqual([k, readlinkSync(`/proc/self/ns/${k}`)]);
      }
      for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(r.stdout).toMatch(new RegExp(`^${cap}:\\s+0+$`, 'm'));
      expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
      // Another sandbox's commands are in other namespaces. Both must be alive while compared: the
      // kernel reuses a dead namespace's inode number, so comparing with one that has ended proves nothing.
      const a = await create();
      const b = await create();
      const held = a.exec(['sh', '-c', 'readlink /proc/self/ns/net > ns.txt; while [ ! -e go ]; do sleep 0.05; done']);
      try {
        let aNet = '';
        for (let i = 0; i < 200 && !aNet; i++) {
          await new Promise((res) => setTimeout(res, 50));
          aNet = (await a.exec(['sh', '-c', 'cat ns.txt 2>/dev/null'])).stdout.trim();
        }
        expect(aNet).toMatch(/^net:\[\d+\]$/);
        const bNet = (await b.exec(['readlink', '/proc/self/ns/net'])).stdout.trim();
        expect(bNet).toMatch(/^net:\[\d+\]$/);
        expect(bNet).not.toBe(aNet);
      } finally {
        await a.writeFile('go', '');
        await held;
      }
    });
  }

  if (!fallback) {
    it('what a command leaves running ends with it, detached or not, and does not hold its output open', async () => {
      const sb = await create();
      // Waiting for the background sleeps would take 100 s (the test's limit is 10).
      const r = await sb.exec(['sh', '-c', 'sleep 4321 & setsid env -i /bin/sleep 4322 </dev/null >/dev/null 2>&1 & echo left']);
      expect(r.stdout).toBe('left\n');
      const ps = await sb.exec(['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done']);
      expect(ps.stdout).toContain('/proc/[0-9]*'); // the listing itself ran
      expect(ps.stdout).not.toMatch(/sleep 432[12]/);
      expect(await waitFor(() => commandLinesHolding('4321').length + commandLinesHolding('4322').length === 0)).toBe(true);
    }, 10_000);

    it('while another command runs, what an ended command left is killed and the other is not', async () => {
      const sb = await create();
      // An exec aborted before it started: it has a number but never reached the holder.
      expect(await sb.exec(['true'], { signal: AbortSignal.abort() })).toMatchObject({ signal: 'SIGKILL' });
      const other = sb.exec(['sh', '-c', 'sleep 7; echo other done']);
      const r = await sb.exec(['sh', '-c', 'setsid /bin/sleep 4323 </dev/null >/dev/null 2>&1 & echo left']);
      expect(r.stdout).toBe('left\n');
      // Gone while the other still runs (it would go anyway once no command runs).
      expect(await waitFor(() => commandLinesHolding('4323').length === 0, 4000)).toBe(true);
      expect(await other).toMatchObject({ exitCode: 0, stdout: 'other done\n' });
    }, 15_000);

    it('pid 1 of the sandbox cannot be signalled, and its pipes cannot be written, from inside', async () => {
      const sb = await create();
      // With a holder, pid 1's stdin and stdout are the runner's command channel: a forged
      // "command 1 exited 0" there would be believed.
      const r = await sb.exec(['sh', '-c', 'kill -KILL 1; kill -STOP 1; echo "X 1 0 -" > /proc/1/fd/1 || echo blocked; echo "R 1" > /proc/1/fd/0 || echo blocked; echo done']);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toMatch(/done\n$/);
      if (await provider.usesHolder()) expect(r.stdout).toBe('blocked\nblocked\ndone\n');
      const again = await sb.exec(['echo', 'still here']);
      expect(again.stdout).toBe('still here\n');
    });

    it('a command that exits while the runner is too busy to read its output still reports its exit and all its output', async () => {
      const sb = await create();
      // The runner stops reading for 2 s (as a loaded machine does): the holder's relay of the
      // output blocks on a full channel. A process the command left exits at 0.4 s and the
      // command at 0.7 s; each exit is a SIGCHLD for the holder while it waits to write.
      const done = sb.exec(['sh', '-c', 'touch started; sleep 0.2; head -c 100000 /dev/zero | tr "\\0" a; (sleep 0.2 >/dev/null 2>&1 &); sleep 0.5']);
      expect(await waitFor(() => existsSync(join(sb.workspaceHostPath, 'started')))).toBe(true);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
      const r = await done;
      expect({ exitCode: r.exitCode, signal: r.signal, length: r.stdout.length, stderr: r.stderr }).toEqual({ exitCode: 0, signal: null, length: 100_000, stderr: '' });
      expect(/^a*$/.test(r.stdout)).toBe(true);
      expect(await sb.exec(['echo', 'still here'])).toMatchObject({ exitCode: 0, stdout: 'still here\n' });
    }, 15_000);
  }

  describe('network', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((c) => { c.on('error', () => undefined); c.end('hi'); });
      await new Promise<void>((r) => server.listen(0, '0.0.0.0', () => r()));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    itIf(netMissing, "a TCP server on the host's loopback (and its other addresses) is unreachable from inside", async () => {
      const hosts = ['127.0.0.1', ...(externalIPv4() ? [externalIPv4()!] : [])];
      // The same probe on the host reaches it: the server is real.
      const outside = await new Promise<string>((done) => execFile(process.execPath, ['-e', NODE_CONNECT, ...hosts], { env: { PORT: String(port) } }, (_e, out) => done(out)));
      expect(outside).toContain('connected 127.0.0.1');
      const sb = await create();
      const r = await sb.exec(['node', '-e', NODE_CONNECT, ...hosts], { env: { PORT: String(port) } });
      expect(r.stdout).toContain('failed 127.0.0.1');
      expect(r.stdout).not.toContain('connected');
    });

    itIf(netMissing, 'the model endpoint is reachable from inside through the Unix socket', async () => {
      const rolloutId = `chat${++n}`;
      const session = proxy.proxy.openSession(rolloutId);
      const sb = await create({ rolloutId, modelEndpoint: { socketPath, url: session.baseUrl } });
      expect(sb.modelBaseUrl).toBe(`http://127.0.0.1:4141/s/${rolloutId}`);
      const r = await sb.exec(['node', '-e', NODE_CHAT], { env: { BASE: sb.modelBaseUrl, KEY: session.apiKey } });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(REPLY);
      expect(proxy.records.some((rec) => rec.rolloutId === rolloutId)).toBe(true);
    });

    itIf(netMissing, 'the model port carries concurrent, large, half-closed streams intact', async () => {
      // An echo service stands in for the proxy: what goes in through 127.0.0.1:4141 must come back.
      const echoSocket = join(mkdtempSync(join(tmpdir(), 'clawgym-echo-')), 'echo.sock');
      const echo = createServer({ allowHalfOpen: true }, (c) => { c.on('error', () => undefined); c.pipe(c); });
      await new Promise<void>((r) => echo.listen(echoSocket, () => r()));
      try {
        const sb = await create({ modelEndpoint: { socketPath: echoSocket, url: '' } });
        const r = await sb.exec(['node', '-e', NODE_ECHO], { env: { STREAMS: '6', BYTES: String(3 * 1024 * 1024) } });
        expect(r.stderr).toBe('');
        expect(r.stdout.trim().split('\n')).toEqual(Array.from({ length: 6 }, (_, i) => `stream ${i} ok`));
      } finally {
        await new Promise<void>((r) => echo.close(() => r()));
        await rm(dirname(echoSocket), { recursive: true, force: true });
      }
    }, 20_000);

    itIf(netMissing, 'modelForwarder: false starts no forwarder; the model is reached through modelSocketPath alone', async () => {
      const rolloutId = `sock${++n}`;
      const session = proxy.proxy.openSession(rolloutId);
      const sb = await create({ rolloutId, modelEndpoint: { socketPath, url: session.baseUrl } });
      expect(sb.modelSocketPath).toBeDefined();
      const path = new URL(sb.modelBaseUrl).pathname;
      const r = await sb.exec(['node', '-e', NODE_CHAT_SOCKET], { env: { SOCK: sb.modelSocketPath!, PATHNAME: path, KEY: session.apiKey }, modelForwarder: false });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(REPLY);
      expect(proxy.records.some((rec) => rec.rolloutId === rolloutId)).toBe(true);
      // No forwarder: the TCP endpoint does not answer in this process's namespace. With a
      // holder the forwarder is the holder's, for the sandbox's whole life: then it does.
      const tcp = await sb.exec(['node', '-e', NODE_CONNECT, '127.0.0.1'], { env: { PORT: '4141' }, modelForwarder: false });
      expect(tcp.stdout).toContain(await provider.usesHolder() ? 'connected 127.0.0.1' : 'failed 127.0.0.1');
    });
  });

  describe('limits', () => {
    // The pids, memory and cpus checks are the conformance suite's (conformance.test.ts, both
    // modes), where a limit this machine cannot enforce is a visible skip and a CI failure. One
    // more here: with a holder, a sandbox from the warm pool gets its memory limit at hand-out.
    it('a big allocation is stopped by the memory limit, in a sandbox from the warm pool too', async () => {
      const how = (await provider.limitEnforcement()).memory;
      if (how.startsWith('not enforced')) {
        if (outcomeWhenMissing(how) === 'fail') throw new Error(`required in CI: the memory limit (${mode}): ${how}`);
        // eslint-disable-next-line no-console
        console.warn(`skipping the memory limit check (${mode}): ${how}`);
        return;
      }
      // Twice: with a holder the second sandbox of this shape comes from the warm pool.
      for (const memoryMb of [160, 170]) {
        const sb = await create({ limits: { memoryMb } });
        const small = await sb.exec(['node', '-e', "console.log('allocated', Buffer.alloc(20 * 1024 * 1024, 1).length)"]);
        expect(small.stdout).toContain('allocated');
        const big = await sb.exec(['node', '-e', "console.log('allocated', Buffer.alloc(600 * 1024 * 1024, 1).length)"]);
        expect(big.stdout).not.toContain('allocated');
        expect(big.exitCode).not.toBe(0);
        expect(big.timedOut).toBe(false);
      }
    }, 15_000);

    it('a long sleep is killed at the wall limit (and so is anything started later)', async () => {
      const sb = await create({ limits: { wallMs: 1500 } });
      const r = await sb.exec(['sleep', '100']);
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).not.toBe(0);
      expect(await waitFor(() => markedPids(sandboxDir(sb)).length === 0)).toBe(true);
      const later = await sb.exec(['true']);
      expect(later.timedOut).toBe(true);
    }, 10_000);

    it('ExecOptions.timeoutMs and an abort signal stop one command', async () => {
      const sb = await create();
      const r = await sb.exec(['sleep', '100'], { timeoutMs: 500 });
      expect(r.timedOut).toBe(true);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 300);
      const a = await sb.exec(['sleep', '100'], { signal: ac.signal });
      expect(a.timedOut).toBe(false);
      expect(a.signal).toBe('SIGKILL');
      const ok = await sb.exec(['sh', '-c', 'cat; echo " done"'], { stdin: 'input' });
      expect(ok.stdout).toBe('input done\n');
    }, 10_000);
  });

  describe('files', () => {
    it('writeFile, copyIn and copyOut take sandbox paths and stay inside', async () => {
      const sb = await create();
      await sb.writeFile(`${sb.workspacePath}/dir/a.txt`, 'A');
      await sb.writeFile('rel.txt', 'R');
      await sb.writeFile(`${sb.homePath}/.config/c.json`, '{}');
      expect(readFileSync(join(sb.workspaceHostPath, 'dir', 'a.txt'), 'utf8')).toBe('A');
      expect(readFileSync(join(sb.workspaceHostPath, 'rel.txt'), 'utf8')).toBe('R');
      const cat = await sb.exec(['sh', '-c', 'cat dir/a.txt rel.txt "$HOME/.config/c.json"']);
      expect(cat.stdout).toBe('AR{}');

      const src = mkdtempSync(join(tmpdir(), 'clawgym-copyin-'));
      await mkdir(join(src, 'sub'));
      await writeFile(join(src, 'sub', 'x.txt'), 'X');
      await sb.copyIn(src, 'in');
      expect((await sb.exec(['cat', 'in/sub/x.txt'])).stdout).toBe('X');
      await sb.exec(['sh', '-c', 'mkdir -p made && echo out > made/o.txt']);
      const dest = join(src, 'back');
      await sb.copyOut(`${sb.workspacePath}/made`, dest);
      expect(await readFile(join(dest, 'o.txt'), 'utf8')).toBe('out\n');

      await expect(sb.writeFile('../escape.txt', 'no')).rejects.toThrow(/escapes/);
      await expect(sb.writeFile('/etc/clawgym-escape', 'no')).rejects.toThrow(/outside/);
      // A symlink made inside must not lead host-side writes out of the sandbox.
      const outside = mkdtempSync(join(tmpdir(), 'clawgym-outside-'));
      await sb.exec(['ln', '-s', outside, 'link']);
      await expect(sb.writeFile('link/evil.txt', 'no')).rejects.toThrow(/outside the sandbox/);
      await expect(sb.copyOut('link', join(src, 'o'))).resolves.toBeUndefined(); // the link itself, not its target
      expect(readdirSync(outside)).toEqual([]);
      await rm(src, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });
  });

  describe('cleanup', () => {
    it('destroy kills everything inside and removes every trace; twice is fine', async () => {
      const sb = await create({ limits: { pids: 100 } });
      const dir = sandboxDir(sb);
      const cgroups = ownerCgroups(sb);
      const bg = sb.exec(['sh', '-c', 'setsid sleep 1000 & echo up > started; exec sleep 1000']);
      expect(await waitFor(() => existsSync(join(sb.workspaceHostPath, 'started')))).toBe(true);
      expect(markedPids(dir).length).toBeGreaterThan(0);
      await Promise.all([sb.destroy(), sb.destroy()]);
      await sb.destroy();
      expect((await bg).exitCode).not.toBe(0);
      expect(await waitFor(() => markedPids(dir).length === 0)).toBe(true);
      await provider.settled(); // a holder's sandbox is removed off the rollout's path
      expect(existsSync(dir)).toBe(false);
      for (const cg of cgroups) expect(existsSync(cg)).toBe(false);
      await expect(sb.exec(['true'])).rejects.toThrow(/destroyed/);
    });

    it('a sandbox id in use is refused; every sandbox starts clean (a pooled holder serves one sandbox only)', async () => {
      const first = await create();
      const id = first.id.split('/')[1]!;
      await expect(create({ rolloutId: id })).rejects.toMatchObject({ code: 'CLAWGYM_SANDBOX_SPEC_INVALID', message: expect.stringContaining('already exists') });
      expect((await first.exec(['true'])).exitCode).toBe(0); // the refused create left it alone
      const tmp = fallback ? '' : '/tmp'; // the fallback's /tmp is the host's
      await first.exec(['sh', '-c', `${tmp ? 'echo left > /tmp/mark; ' : ''}echo left > "$HOME/mark"; echo left > mark`]);
      await first.destroy();
      for (let i = 0; i < 3; i++) {
        const sb = await create();
        const r = await sb.exec(['sh', '-c', `ls -A ${tmp} "$HOME" "$PWD"`]);
        expect(r.exitCode).toBe(0);
        expect(r.stdout).not.toContain('mark');
        await sb.destroy();
      }
    });

    it('sweep leaves live sandboxes alone', async () => {
      const sb = await create();
      const report = await localSandboxProvider({ root, log: () => undefined }).sweep();
      expect(report.removed).not.toContain(sandboxDir(sb));
      expect(existsSync(sb.workspaceHostPath)).toBe(true);
    });

    it('after a runner is SIGKILLed, sweep() from a fresh provider removes its processes and folders', async () => {
      if (!existsSync(DIST_LOCAL)) throw new Error(`${DIST_LOCAL} is missing: run npm run build`);
      const script = join(root, 'runner.js');
      await writeFile(script, RUNNER);
      const child = spawn(process.execPath, [script, DIST_LOCAL, root, mode, socketPath, String(holder)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (d) => { err += d; });
      const exited = new Promise<void>((r) => child.on('exit', () => r()));
      const line = await new Promise<string>((done, fail) => {
        const t = setTimeout(() => fail(new Error(`runner did not start: ${err}`)), 8000);
        child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) { clearTimeout(t); done(out.split('\n')[0]!); } });
        child.on('exit', () => { clearTimeout(t); fail(new Error(`runner exited: ${err}`)); });
      });
      const { dir } = JSON.parse(line) as { dir: string };
      const cgroups: string[] = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')).cgroups;
      expect(markedPids(dir).length).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await exited;
      // Without bubblewrap (no --die-with-parent, no pid namespace) the sandbox outlives its runner.
      if (fallback) expect(markedPids(dir).length).toBeGreaterThan(0);
      expect(existsSync(dir)).toBe(true);

      const report = await localSandboxProvider({ root, log: () => undefined }).sweep('killed');
      expect(report.removed).toContain(dir);
      expect(await waitFor(() => markedPids(dir).length === 0)).toBe(true);
      expect(existsSync(dir)).toBe(false);
      expect(existsSync(join(root, 'killed'))).toBe(false);
      for (const cg of cgroups) expect(existsSync(cg)).toBe(false);
      expect((await localSandboxProvider({ root, log: () => undefined }).sweep('killed')).removed).toEqual([]);
    }, 15_000);
  });
}

const bwrapMissing = bubblewrapMissing();

describeIf(bwrapMissing, 'local sandbox: bubblewrap', () => suite('bubblewrap'));

describeIf(bwrapMissing, 'local sandbox: bubblewrap, one per command (holder: false)', () => suite('bubblewrap', false));

describe('local sandbox: fallback (plain processes)', () => suite('fallback'));

describe('local sandbox: rlimits only (cgroups off)', () => {
  let root: string;
  let provider: LocalSandboxProvider;
  let socketPath: string;
  let sock: Server;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'clawgym-local-rlimit-'));
    provider = localSandboxProvider({ root, cgroups: false, allowUnisolated: true, log: () => undefined });
    socketPath = join(root, 's.sock');
    sock = createServer((c) => { c.on('error', () => undefined); c.end(); });
    await new Promise<void>((r) => sock.listen(socketPath, () => r()));
  });
  afterAll(async () => {
    await provider.close();
    await provider.sweep();
    await new Promise<void>((r) => sock.close(() => r()));
    await rm(root, { recursive: true, force: true });
  });
  const create = (rolloutId: string, limits: SandboxSpec['limits']) => provider.create({ runId: 'rl', rolloutId, limits, modelEndpoint: { socketPath, url: 'http://unused' } });

  it('says how each limit is enforced', async () => {
    const e = await provider.limitEnforcement();
    expect(e.memory).toMatch(/RLIMIT_AS/);
    expect(e.cpus).toMatch(/RLIMIT_CPU/);
    if (process.getuid?.() === 0) expect(e.pids).toMatch(/not enforced: root ignores RLIMIT_NPROC/);
    else expect(e.pids).toMatch(/RLIMIT_NPROC/);
  });

  it('memory: RLIMIT_AS stops a big allocation', async () => {
    const sb = await create('mem', { memoryMb: 1500 });
    try {
      const ok = await sb.exec(['node', '-e', "console.log('allocated', Buffer.alloc(50 * 1024 * 1024, 1).length)"]);
      expect(ok.stdout).toContain('allocated');
      const big = await sb.exec(['node', '-e', "console.log('allocated', Buffer.alloc(2000 * 1024 * 1024).length)"]);
      expect(big.stdout).not.toContain('allocated');
      expect(big.exitCode).not.toBe(0);
    } finally { await sb.destroy(); }
  }, 10_000);

  it('cpu: RLIMIT_CPU (cpus x wall seconds) stops a busy loop before the wall limit', async () => {
    const sb = await create('cpu', { cpus: 0.25, wallMs: 4000 }); // 1 CPU second
    try {
      const r = await sb.exec(['node', '-e', "const t = Date.now(); while (Date.now() - t < 3000); console.log('finished')"]);
      expect(r.stdout).not.toContain('finished');
      expect(r.timedOut).toBe(false);
      expect(r.exitCode).not.toBe(0);
    } finally { await sb.destroy(); }
  }, 10_000);

  // As root RLIMIT_NPROC does not apply: the enforcement report above says "not enforced", and
  // here that is asserted to be true (the cgroup pids limit is checked by the conformance suite).
  const asRoot = process.getuid?.() === 0;
  it(asRoot ? 'pids: RLIMIT_NPROC does not stop a fork loop as root (as reported)' : 'pids: RLIMIT_NPROC stops a fork loop', async () => {
    const sb = await create('pids', { pids: 40 });
    try {
      const r = await sb.exec(['sh', '-c', 'n=0; while [ $n -lt 200 ]; do sleep 2 >/dev/null 2>&1 & n=$((n+1)); done; echo started $n']);
      if (asRoot) expect(r.stdout).toContain('started 200');
      else expect(r.stdout).not.toContain('started 200');
    } finally { await sb.destroy(); }
  }, 10_000);
});
