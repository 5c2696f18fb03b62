#!/usr/bin/env node
'use strict';
// Thin launcher so the bin works from a published tarball and from the workspace alike.
// The Node check comes first, before anything that may not load on an old Node.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  // An older Node (Debian 12 ships 20) hands over to the Node 24 that `npm install` put beside
  // this package (npm's `node` package, a dependency of @clawgym/core), found from core's own
  // folder first, so `clawgym` works in any project on the Node a fresh machine has.
  let node24;
  try { node24 = require.resolve('node/bin/node', { paths: [__dirname, process.cwd()] }); } catch { node24 = undefined; }
  const { spawnSync } = require('node:child_process');
  const ok = node24 && spawnSync(node24, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout?.trim() >= '22';
  if (!ok) {
    process.stderr.write(`error: ClawGym needs Node 22 or 24 (this is Node ${process.versions.node}).\n  hint: run \`npm install\` in the project (@clawgym/core depends on npm's node@24 package, which puts Node 24 into node_modules), or install Node 24 (for example \`npm install node@24\` and put node_modules/node/bin on PATH)\n`);
    process.exit(2);
  }
  handOver(node24);
  return;
}
watchLauncher();
require('../dist/cli/main.js').runCli(process.argv.slice(2));

/**
 * Run this command on `node24` as a child that behaves as this process would. The child has a
 * process group of its own, so a terminal's Ctrl-C reaches it once, through here, like a signal
 * any other program sends this PID; and an IPC channel, which closes when this process dies
 * however it dies (kill -9 included), so the child stops too instead of running on under init.
 */
function handOver(node24) {
  const { spawn } = require('node:child_process');
  const child = spawn(node24, [__filename, ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
    env: { ...process.env, CLAWGYM_LAUNCHER: String(process.pid) },
  });
  child.channel?.unref();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGWINCH'];
  const forward = (s) => { try { child.kill(s); } catch { /* already gone */ } };
  for (const s of signals) process.on(s, forward);
  child.on('exit', (code, signal) => {
    for (const s of signals) process.removeListener(s, forward);
    if (signal) process.kill(process.pid, signal);
    process.exit(code ?? 1);
  });
}

/**
 * In the child of the launcher above: when the launcher is gone (its channel closed), stop as on
 * SIGTERM — harnesses killed, sandboxes removed, records flushed — and exit within 10 s regardless.
 */
function watchLauncher() {
  if (!process.env.CLAWGYM_LAUNCHER || !process.channel) return;
  delete process.env.CLAWGYM_LAUNCHER;
  process.on('disconnect', () => {
    setTimeout(() => process.exit(129), 10_000).unref();
    process.kill(process.pid, 'SIGTERM');
  });
  // The channel must not keep a finished command alive (a listener for 'disconnect' refs it).
  process.channel.unref();
}
