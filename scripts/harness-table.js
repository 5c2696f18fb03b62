#!/usr/bin/env node
// The closing table of scripts/e2e-harnesses.sh: one row per real harness, from the e2e tests'
// jest report, the install script's HARNESS lines and `clawgym inspect --json` of their records.
//   node scripts/harness-table.js <inspect.json> <jest.json> <harness-lines.txt>
'use strict';
const fs = require('fs');

const HARNESSES = ['claude-code', 'openclaw', 'codex', 'qwen-code', 'opencode', 'gemini-cli', 'pi', 'kilo', 'grok', 'cline', 'continue', 'droid', 'copilot', 'omp'];
const WIRE = {
  'claude-code': 'anthropic-messages', openclaw: 'openai-chat', codex: 'openai-responses', 'qwen-code': 'openai-chat',
  opencode: 'openai-chat', 'gemini-cli': 'gemini-generate-content', pi: 'openai-chat', kilo: 'openai-chat', grok: 'openai-chat', cline: 'openai-chat', continue: 'openai-chat',
  droid: 'openai-chat', copilot: 'openai-chat', omp: 'openai-chat',
};

/** The harness a rollout id belongs to: its name, or its name and a dash (the longest that fits). */
const harnessOf = (id) => HARNESSES.filter((h) => id === h || id.startsWith(`${h}-`)).sort((a, b) => b.length - a.length)[0];

function main([inspectFile, jestFile, linesFile]) {
  const inspect = JSON.parse(fs.readFileSync(inspectFile, 'utf8'));
  const jest = JSON.parse(fs.readFileSync(jestFile, 'utf8'));
  const versions = {};
  for (const line of fs.readFileSync(linesFile, 'utf8').split('\n')) {
    const m = /^HARNESS (\S+) .*version=(\S+)/.exec(line);
    if (m) versions[m[1]] = m[2];
  }
  const rows = HARNESSES.map((h) => {
    const tests = jest.testResults.filter((t) => t.name.includes(`/plugins/harness-${h}/src/`)).flatMap((t) => t.assertionResults);
    const rollouts = inspect.rollouts.filter((r) => harnessOf(r.rolloutId) === h);
    const sum = (f) => rollouts.reduce((n, r) => n + f(r), 0);
    const reuse = sum((r) => r.tito.reuse);
    const extending = sum((r) => r.tito.reuse + r.tito.forks);
    const side = {};
    for (const r of rollouts) for (const [role, n] of Object.entries(r.tito.sideRoles)) side[role] = (side[role] ?? 0) + n;
    return [
      h, versions[h] ?? 'not installed', WIRE[h],
      `${tests.filter((t) => t.status === 'passed').length}/${tests.length}`,
      String(rollouts.length), String(sum((r) => r.tito.calls)),
      extending ? `${reuse}/${extending}` : 'n/a',
      Object.entries(side).map(([role, n]) => `${role} ${n}`).join(', ') || '-',
      `${sum((r) => r.drift.clean)}/${sum((r) => r.drift.realigned)}/${sum((r) => r.drift.fork)}`,
    ];
  });
  const head = ['harness', 'version', 'wire format', 'e2e passed', 'rollouts', 'calls', 'main reuse', 'side calls', 'drift, all calls: clean/realigned/fork'];
  const widths = head.map((t, i) => Math.max(t.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  // Main reuse counts the later main calls that extend or fork (forks include each compaction's restart).
  const failed = rows.filter((r) => !/^(\d+)\/\1$/.test(r[3]) || r[3] === '0/0');
  if (failed.length) {
    console.log(`e2e tests failed or did not run for: ${failed.map((r) => r[0]).join(', ')}`);
    process.exitCode = 1;
  }
}

main(process.argv.slice(2));
