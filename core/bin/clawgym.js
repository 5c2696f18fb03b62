#!/usr/bin/env node
'use strict';
// Thin launcher so the bin works from a published tarball and from the workspace alike.
// The Node check comes first, before anything that may not load on an old Node.
const major = Number(process.versions.node.split('.')[0]);
if (major < 20) {
  process.stderr.write(`error: ClawGym needs Node 22 or 24 (this is Node ${process.versions.node}).\n  hint: install Node 24 (for example \`npm install node@24\` and put node_modules/node/bin on PATH)\n`);
  process.exit(2);
}
if (major < 22 && !process.env.CLAWGYM_QUIET_NODE) {
  process.stderr.write(`warning: Node ${process.versions.node} is past end of life; ClawGym supports Node 22 and 24 (the newest Claude Code and the JobBench SQLite reader need 22 or later). Set CLAWGYM_QUIET_NODE=1 to hide this.\n`);
}
require('../dist/cli/main.js').runCli(process.argv.slice(2));
