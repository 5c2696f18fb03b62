#!/usr/bin/env node
'use strict';
// After `npm install` of the repository: when npm itself ran on a Node older than 22 (Debian 12
// ships 20), say in one line what that means, since .npmrc keeps npm's per-package engine
// warnings out of the way. npm's own Node is read from its user agent ("npm/11.19.1 node/v20.20.2
// linux x64"): `node` in an npm script is already the Node 24 of node_modules/.bin.
const agent = process.env.npm_config_user_agent ?? '';
const version = /\bnode\/v(\d+)\.\d+\.\d+/.exec(agent);
if (version && Number(version[1]) < 22) {
  process.stdout.write(`ClawGym: npm ran on Node ${version[0].slice(6)}; the repository's commands (npm test, npx clawgym) run on the Node 24 this install put into node_modules/node, so nothing needs doing. (npm's "Unsupported engine" warnings for our packages, which need Node >=22, are off in .npmrc; npm install --loglevel=warn shows them.)\n`);
}
