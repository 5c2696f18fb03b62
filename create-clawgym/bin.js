#!/usr/bin/env node
'use strict';
// `npm create clawgym <folder>` runs this on whatever Node the machine has (18 or later): it
// only writes files; the project's own `npm install` brings Node 24 for `clawgym`.
const { createProject } = require('./index.js');

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write('Usage: npm create clawgym <folder>\n\nMakes a ClawGym project in <folder>: package.json and clawgym.config.ts (the embedded model\nfrom its shipped cold start, local sandboxes, the agentloop harness, built-in tasks, GRPO).\n');
  process.exit(0);
}
const folder = args.find((a) => !a.startsWith('-'));
if (!folder) {
  process.stderr.write('error: name the folder to make, e.g. `npm create clawgym my-project`\n');
  process.exit(2);
}
try {
  const made = createProject(folder, process.cwd());
  process.stdout.write(`Made a ClawGym project in ${made.dir}:\n${made.files.map((f) => `  ${f}`).join('\n')}\n\nNext:\n  cd ${folder}\n  npm install\n  npx clawgym doctor --fix   # what the config needs that this machine lacks (bubblewrap)\n  npx clawgym run            # a short training run; the report is runs/${made.name}/report.html\n`);
} catch (err) {
  process.stderr.write(`error: ${err.message}\n${err.hint ? `  hint: ${err.hint}\n` : ''}`);
  process.exit(1);
}
