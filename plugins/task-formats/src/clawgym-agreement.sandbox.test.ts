/**
 * Our ClawGym-Task grading against ClawGym-RL's (bench/clawgym-bench/reference_grade.py, a port of
 * RL/clawgym_rl_rollout.py at 0e8526d8 with bubblewrap for its chroot) on every task of the sample
 * in ../shared/data/clawgym-task-sample: stub outputs at every path each query names, and the
 * hand-made near-solutions. The full comparison (untouched inputs too) is `npm run bench:clawgym-bench`.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { localSandboxProvider } from '@clawgym/core';
import { bubblewrapMissing, describeIf } from '@clawgym/core/testing';
import { agrees, clawgymAgreement, loadClawGymBenchFolder, outputPathsOf, type AgreementVariant } from './index';

const SAMPLE = resolve(process.env.CLAWGYM_TASK_SAMPLE ?? join(__dirname, '..', '..', '..', '..', 'shared', 'data', 'clawgym-task-sample'));
const BENCH = join(__dirname, '..', '..', '..', 'bench', 'clawgym-bench');
const PYTHON = '/usr/bin/python3';
const missing = bubblewrapMissing()
  ?? (existsSync(PYTHON) ? undefined : `${PYTHON} is missing (apt-get install -y python3)`)
  ?? (existsSync(join(SAMPLE, 'task_0000')) ? undefined : `the ClawGym-Task sample is not at ${SAMPLE} (set CLAWGYM_TASK_SAMPLE)`);

describe('agreement rules', () => {
  it('agree on equal scores, on a fault against the reference silent 0.0, and on a clamped score only', () => {
    expect(agrees({ score: 0.5, ms: 1 }, { score: 0.5, ms: 1 })).toBe(true);
    expect(agrees({ score: 0.5, ms: 1 }, { score: 0.4, ms: 1 })).toBe(false);
    expect(agrees({ fault: 'failed', ms: 1 }, { fault: 'exit 1', ms: 1 })).toBe(true);
    expect(agrees({ fault: 'failed', ms: 1 }, { score: 0, ms: 1 })).toBe(false);
    expect(agrees({ score: 0, ms: 1 }, { fault: 'exit 1', ms: 1 })).toBe(false);
    expect(agrees({ score: 3, ms: 1 }, { score: 1, ms: 1 })).toBe(true);
  });

  it('finds the output paths a query names, leaving out its inputs and reward/', () => {
    const q = 'Read input/a.csv and data.json, write output/report.md, output/summary.json and ./notes.txt; keep reward/x.py. Version 1.2 of e.g. the tool.';
    expect(outputPathsOf(q, new Set(['data.json']))).toEqual(['notes.txt', 'output/report.md', 'output/summary.json']);
  });
});

describeIf(missing, 'ClawGym-Task grading agrees with ClawGym-RL on every sample task', () => {
  let dir: string;
  let server: Server;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clawgym-agree-'));
    server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(join(dir, 'model.sock'), r));
  });
  afterAll(async () => {
    if (server) await new Promise<void>((r) => server.close(() => r()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gives the same reading as the reference on stub outputs and near-solutions of all sample tasks', async () => {
    const { tasks, problems } = await loadClawGymBenchFolder(SAMPLE);
    expect(problems).toEqual([]);
    const sandboxes = localSandboxProvider({ root: join(dir, 'sandboxes'), log: () => {} });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { NEAR_SOLUTIONS } = require(join(BENCH, 'near-solutions.js')) as { NEAR_SOLUTIONS: Record<string, AgreementVariant> };
    try {
      const cases = await clawgymAgreement(tasks, {
        referenceScript: join(BENCH, 'reference_grade.py'), python: PYTHON, sandboxes, socketPath: join(dir, 'model.sock'), nearSolutions: NEAR_SOLUTIONS, untouched: false,
      });
      expect(cases).toHaveLength(tasks.length + Object.keys(NEAR_SOLUTIONS).length);
      expect(cases.filter((c) => !c.agree)).toEqual([]);
      // The comparison discriminates: most stub workspaces score above 0, by both graders.
      const positive = cases.filter((c) => 'score' in c.reference && c.reference.score > 0);
      expect(positive.length).toBeGreaterThan(tasks.length / 2);
      expect(cases.filter((c) => c.variant === 'near-solution' && 'score' in c.ours && c.ours.score > 0.25)).toHaveLength(Object.keys(NEAR_SOLUTIONS).length);
    } finally {
      await sandboxes.close();
    }
  }, 600_000);
});
