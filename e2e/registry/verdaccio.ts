import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** A Verdaccio on loopback with storage of its own, no uplink, and a user to publish as. */
export interface LocalRegistry {
  url: string;
  /** An npm auth token of the registry's user (publishes, installs). */
  token: string;
  pid: number;
  /** A userconfig for npm: this registry, with the token. */
  npmrc: string;
  stop(): Promise<void>;
}

/**
 * fetch, tried again when a pooled connection turns out closed: a test that blocks the event loop
 * (spawnSync) cannot see the server close an idle keep-alive socket before reusing it.
 */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  for (let tries = 1; ; tries++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      // By name: under jest, fetch's TypeError is another realm's.
      if (tries >= 3 || (err as Error).name !== 'TypeError') throw err;
    }
  }
}

const VERDACCIO = resolve(__dirname, '..', '..', 'node_modules', 'verdaccio', 'bin', 'verdaccio');

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitUntilUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode} before it answered:\n${log()}`);
    try {
      if ((await fetch(`${url}/-/ping`)).ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`verdaccio did not answer at ${url} within 60 s:\n${log()}`);
}

/**
 * Start Verdaccio (the devDependency) in `dir`: its config, storage and htpasswd there, nothing
 * proxied (every package it serves was published to it), bodies up to 512 MB (Node's own binary
 * package is one of them). Registers a user and returns its token; `stop()` ends it by PID.
 */
export async function startVerdaccio(dir: string): Promise<LocalRegistry> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = join(dir, 'config.yaml');
  writeFileSync(config, [
    `storage: ${join(dir, 'storage')}`,
    'auth:',
    '  htpasswd:',
    `    file: ${join(dir, 'htpasswd')}`,
    '    max_users: 10',
    'uplinks: {}',
    'packages:',
    "  '**':",
    '    access: $all',
    '    publish: $authenticated',
    '    unpublish: $authenticated',
    'max_body_size: 512mb',
    'web:',
    '  enable: false',
    // Tokens as JWTs: a request is not a bcrypt of the password (hundreds of ms each) as with
    // htpasswd's own tokens.
    'security:',
    '  api:',
    '    jwt:',
    '      sign:',
    '        expiresIn: 1d',
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n'));
  let output = '';
  const child = spawn(process.execPath, [VERDACCIO, '--config', config, '--listen', `127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-8000); });
  child.stderr!.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-8000); });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, 'SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
  };
  try {
    await waitUntilUp(url, child, () => output);
    const user = await fetchAgain(`${url}/-/user/org.couchdb.user:clawgym`, {
      method: 'PUT', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'clawgym', password: 'clawgym-e2e', email: 'e2e@clawgym.invalid', type: 'user' }),
    });
    const { token } = await user.json() as { token?: string };
    if (!user.ok || !token) throw new Error(`verdaccio refused to add a user: HTTP ${user.status}\n${output}`);
    const npmrc = join(dir, 'npmrc');
    writeFileSync(npmrc, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    return { url, token, pid: child.pid!, npmrc, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
