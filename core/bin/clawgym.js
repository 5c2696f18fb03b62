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
  const { spawn } = require('node:child_process');
  const child = spawn(node24, [__filename, ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C reaches the child from the terminal itself; other signals are passed on.
  process.on('SIGINT', () => {});
  for (const s of ['SIGTERM', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
  return;
}
require('../dist/cli/main.js').runCli(process.argv.slice(2));
