#!/usr/bin/env node
'use strict';
// Thin launcher so the bin works from a published tarball and from the workspace alike.
require('../dist/cli/main.js').runCli(process.argv.slice(2));
