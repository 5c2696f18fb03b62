#!/usr/bin/env node
'use strict';
// Thin launcher so the bin works from a published tarball and from the workspace alike.
// A reader that stops early (`clawgym inspect … | head`) closes the pipe: that ends the output,
// as it does for cat or ls, instead of crashing on EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => { if (err && err.code === 'EPIPE') process.exit(0); throw err; });
}
require('../dist/cli/main.js').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err && err.message ? err.message : err); process.exitCode = 1; },
);
