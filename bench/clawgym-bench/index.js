'use strict';
// bench:clawgym-bench — our grading of ClawGym-Task against ClawGym-RL's, on the 202 sample tasks
// (../shared/data/clawgym-task-sample, or the folder given after `--`, such as ClawGym-RL's
// RL/data/clawgym_eval, without the sample's near-solutions): every task
// loaded, then each task's reward.sh run the reference way (reference_grade.py: ClawGym-RL's
// grading ported, bubblewrap for its chroot) and ours (the task's verify() in the local
// bubblewrap sandbox) on the same workspaces — the untouched inputs, stub outputs at every path
// the query names, and the near-solutions in near-solutions.js. Ends with
//   RESULT clawgym-bench tasks=N loaded=N agree=N truth_positive=N verifier_faults=N grade_p50_ms=… reference_grade_p50_ms=…
// agree: tasks on which every workspace got the same reading both ways; truth_positive: tasks
// where some workspace scored above 0 by the reference; verifier_faults: workspaces on which
// reward.sh gave no score (the reference's silent 0.0).
const { mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { localSandboxProvider, bubblewrapPath } = require('../../core/dist/index.js');
const { clawgymAgreement, loadClawGymBenchFolder } = require('../../plugins/task-formats/dist/index.js');
const { NEAR_SOLUTIONS } = require('./near-solutions.js');

const SAMPLE = resolve(join(__dirname, '..', '..', '..', 'shared', 'data', 'clawgym-task-sample'));
const folder = resolve(process.argv[2] ?? SAMPLE);
// The near-solutions are for the sample's tasks (another folder's task_0000 is another task).
const nearSolutions = folder === SAMPLE ? NEAR_SOLUTIONS : {};
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };

async function main() {
  if (!bubblewrapPath()) throw new Error('bubblewrap is needed (apt-get install -y bubblewrap)');
  const t0 = Date.now();
  const { tasks, problems } = await loadClawGymBenchFolder(folder);
  console.log(`loaded ${tasks.length} of ${tasks.length + problems.length} tasks from ${folder} in ${Date.now() - t0} ms`);
  for (const p of problems) console.log(`  not loaded: ${p.where}: ${p.message}`);

  const sockDir = mkdtempSync(join(tmpdir(), 'bench-clawgym-'));
  const socketPath = join(sockDir, 'model.sock');
  const server = createServer((c) => c.destroy());
  await new Promise((r) => server.listen(socketPath, r));
  const sandboxes = localSandboxProvider({ root: join(sockDir, 'sandboxes'), log: () => {} });
  let done = 0;
  try {
    const cases = await clawgymAgreement(tasks, {
      referenceScript: join(__dirname, 'reference_grade.py'), sandboxes, socketPath, nearSolutions,
      onCase: (c) => {
        if (!c.agree) console.log(`  DISAGREE ${c.task}/${c.variant}: reference ${JSON.stringify(c.reference)} ours ${JSON.stringify(c.ours)}`);
        if (++done % 100 === 0) console.log(`  ${done} workspaces graded`);
      },
    });
    const byTask = new Map();
    for (const c of cases) byTask.set(c.task, [...(byTask.get(c.task) ?? []), c]);
    const agree = [...byTask.values()].filter((cs) => cs.every((c) => c.agree)).length;
    const positive = [...byTask.values()].filter((cs) => cs.some((c) => 'score' in c.reference && c.reference.score > 0)).length;
    const faults = cases.filter((c) => 'fault' in c.ours).length;
    const near = cases.filter((c) => c.variant === 'near-solution');
    for (const v of ['untouched', 'stubs', 'near-solution']) {
      const cs = cases.filter((c) => c.variant === v);
      const pos = cs.filter((c) => 'score' in c.reference && c.reference.score > 0).length;
      console.log(`${v.padEnd(14)} workspaces=${cs.length} agree=${cs.filter((c) => c.agree).length} reference_above_0=${pos}`);
    }
    for (const c of cases.filter((x) => 'fault' in x.ours)) console.log(`  verifier fault ${c.task}/${c.variant}: ${c.ours.fault.split('\n').filter(Boolean).slice(-1)[0]} (reference: ${JSON.stringify(c.reference).slice(0, 160)})`);
    for (const c of near) console.log(`  near-solution ${c.task}: reference ${'score' in c.reference ? c.reference.score : JSON.stringify(c.reference)} ours ${'score' in c.ours ? c.ours.score : JSON.stringify(c.ours)}`);
    const ours = median(cases.map((c) => c.ours.ms));
    const ref = median(cases.map((c) => c.reference.ms));
    console.log(`graded ${cases.length} workspaces both ways in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`RESULT clawgym-bench tasks=${tasks.length + problems.length} loaded=${tasks.length} agree=${agree} truth_positive=${positive} verifier_faults=${faults} grade_p50_ms=${ours.toFixed(1)} reference_grade_p50_ms=${ref.toFixed(1)}`);
  } finally {
    await sandboxes.close();
    server.close();
    rmSync(sockDir, { recursive: true, force: true });
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
