'use strict';
const { existsSync, mkdirSync, readdirSync, writeFileSync } = require('node:fs');
const { basename, join, resolve } = require('node:path');

/** The version of every ClawGym package this scaffold installs (they are released together). */
const VERSION = require('./package.json').version;

/** The packages of the default run: the CLI and kernel, and one plugin per slot the config fills. */
const PACKAGES = ['@clawgym/core', '@clawgym/engine-embedded', '@clawgym/harness-agentloop', '@clawgym/task-builtin', '@clawgym/algo-grpo'];

const config = (name) => `import { defineConfig } from '@clawgym/core';

/**
 * A short run of the default set-up, sized for a laptop (about 3 minutes on 2 cores):
 * - engine and trainer: the embedded transformer (d64, 2 layers, in TypeScript), from the cold
 *   start that @clawgym/engine-embedded ships ('cold-start': it writes a named word to a file most
 *   of the time, and copies a word in upper case about a fifth of the time);
 * - sandbox: local (bubblewrap; \`npx clawgym doctor --fix\` installs it);
 * - harness: agentloop, a small agent with read/write/list/bash tools;
 * - tasks: the built-in \`vocab-upper\` family (held-out word combinations are never trained on);
 * - GRPO, held-out Pass@1 before the first step and after the last.
 * \`npx clawgym run --steps 60\` trains longer; \`npx clawgym run --resume --steps 60\` goes on.
 */
export default defineConfig({
  name: '${name}',
  engine: { use: 'embedded', options: { model: { dModel: 64, layers: 2, heads: 4, context: 384 }, checkpoint: 'cold-start', optimizer: { lr: 3e-4 } } },
  trainer: 'embedded',
  sandbox: 'local',
  harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
  algorithm: 'grpo',
  run: { steps: 20, tasksPerStep: 4, groupSize: 8, concurrency: 4, evalEvery: 0, evalTasks: 100 },
});
`;

const readme = (name) => `# ${name}

A ClawGym project: reinforcement learning for an agent model through a real agent harness.

\`\`\`sh
npm install                  # ClawGym, its plugins and Node 24 (for \`clawgym\`, whatever Node runs npm)
npx clawgym doctor --fix     # installs what this machine lacks (bubblewrap for the local sandbox)
npx clawgym run              # trains as clawgym.config.ts says; the report is runs/${name}/report.html
npx clawgym eval             # held-out Pass@1 of the policy the config starts from
\`\`\`

\`npx clawgym plugins\` lists what is installed; \`npx clawgym new plugin --kind task my-tasks\`
makes a plugin package of your own.
`;

/** A package name from a folder name: lower case, letters, digits, "-", "." and "_". */
const packageName = (folder) => basename(resolve(folder)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '') || 'clawgym-project';

/**
 * Write a ClawGym project into `folder` (made if missing; refused if it holds anything):
 * package.json, clawgym.config.ts, README.md and .gitignore. Installs nothing.
 */
function createProject(folder, cwd = process.cwd()) {
  const dir = resolve(cwd, folder);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw Object.assign(new Error(`${dir} exists and is not empty`), { hint: 'Name a new folder, or empty this one.' });
  }
  const name = packageName(folder);
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    scripts: { train: 'clawgym run', eval: 'clawgym eval', doctor: 'clawgym doctor' },
    devDependencies: Object.fromEntries(PACKAGES.map((p) => [p, `^${VERSION}`])),
  };
  const files = {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'clawgym.config.ts': config(name),
    'README.md': readme(name),
    '.gitignore': 'node_modules\nruns\n',
  };
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return { dir, name, files: Object.keys(files) };
}

module.exports = { createProject, PACKAGES, VERSION };
