import { definePlugin, z } from '@clawgym/core';
import { clawgymBench } from './clawgym-bench';
import { harbor } from './harbor';
import { pinchbench } from './pinchbench';
import { PinchJudgeSchema } from './pinchbench-grade';

export { contentHash, workdirOf, harbor, loadHarbor, loadHarborFolder, loadHarborTask, parseHarborToml, rewriteHarborPaths, type HarborConfig, type HarborLoad, type HarborOptions, type HarborTask, type TaskProblem } from './harbor';
export { clawgymBench, loadClawGymBench, loadClawGymBenchFolder, loadClawGymBenchTask, type ClawGymBenchLoad, type ClawGymBenchOptions, type ClawGymBenchTask } from './clawgym-bench';
export { gradeClawGym, readRewardRun, OPENCLAW_WORKSPACE, PAYLOAD_FILE, REWARD_TIMEOUT_MS, type ClawGymGradeInput, type RewardReading } from './clawgym-reward';
export { agrees, clawgymAgreement, outputPathsOf, stubVariant, type AgreementCase, type AgreementOptions, type AgreementVariant, type Graded } from './clawgym-agreement';
export { openclawTranscript, type TranscriptEntry } from './openclaw-transcript';
export { loadPinchBenchFolder, pinchbench, type PinchBenchLoad, type PinchBenchOptions, type PinchBenchTask } from './pinchbench';
export { combineGrades, gradeAutomated, gradeByJudge, judgePromptOf, parseJudgeText, summarizeTranscript, PinchJudgeSchema, type PartGrade, type PinchJudge } from './pinchbench-grade';
export { parsePinchBenchTask, type GradingType, type PinchBenchSpec, type WorkspaceFile } from './pinchbench-task';
export { pyFloat, pySplitLines, pyStrip } from './py-float';
export { bashOracle } from './oracle';
export { splitOf, pickSplit, type SplitOptions } from '@clawgym/core';
export { VERIFIER_DIR, requireSandbox, parseScore, parseRewardJson } from './verifier-script';

/**
 * `@clawgym/task-formats`: no fixed suite; one `harbor:<folder>` suite per folder in `harbor`,
 * one `clawgym-bench:<folder>` suite per folder in `clawgymBench` and one `pinchbench:<folder>`
 * suite per folder in `pinchbench`. Their verifiers run
 * scripts inside the rollout's sandbox.
 */
const split = {
  /** Share of the folder's tasks in the test split (default 0.2), chosen by hashing each id. */
  testFraction: z.number().min(0).max(1).optional(),
  /** Salt of that hash: another seed, another test set. */
  splitSeed: z.number().int().optional(),
  /** The test tasks by id (every other task is train); wins over testFraction. */
  testIds: z.array(z.string().min(1)).optional(),
  /** Suite name (default `harbor:<folder>` / `clawgym-bench:<folder>`). */
  name: z.string().min(1).optional(),
  passThreshold: z.number().min(0).max(1).optional(),
};
const folder = <T extends z.ZodRawShape>(extra: T) => z.union([z.string().min(1), z.strictObject({ dir: z.string().min(1), ...split, ...extra })]);
const HarborFolder = folder({
  /** `image` (default): run each task in its Dockerfile's image; `copy`: copy environment/ into the workspace. */
  environment: z.enum(['image', 'copy']).optional(),
  /** Fail on the first broken task instead of loading the others and reporting it. */
  strict: z.boolean().optional(),
});
const PinchFolder = folder({
  /** The judge of llm_judge and hybrid tasks (an OpenAI-compatible chat endpoint). */
  judge: PinchJudgeSchema.optional(),
});
const BenchFolder = folder({
  /** reward.sh's time limit in ms (default 120 000, ClawGym-RL's). */
  rewardTimeoutMs: z.number().int().positive().optional(),
  /** Fail on the first broken task instead of loading the others and reporting it. */
  strict: z.boolean().optional(),
});

const taskFormats = definePlugin({
  name: 'clawgym:task-formats',
  core: '^0.1.0',
  options: z.strictObject({
    harbor: z.array(HarborFolder).default([]),
    clawgymBench: z.array(BenchFolder).default([]),
    /** PinchBench repositories (tasks/*.md, assets/), one `pinchbench:<folder>` suite each. */
    pinchbench: z.array(PinchFolder).default([]),
  }),
  apply(api, options) {
    const asOptions = <F extends { dir: string }>(f: string | F) => (typeof f === 'string' ? { dir: f } : f);
    for (const f of options.harbor) {
      const { dir, ...o } = asOptions(f);
      api.provide.taskSuite(harbor(dir, { log: (m) => api.log.warn(m), ...o }));
    }
    for (const f of options.clawgymBench) {
      const { dir, ...o } = asOptions(f);
      api.provide.taskSuite(clawgymBench(dir, { log: (m) => api.log.warn(m), ...o }));
    }
    for (const f of options.pinchbench) {
      const { dir, ...o } = asOptions(f);
      api.provide.taskSuite(pinchbench(dir, { log: (m) => api.log.warn(m), ...o }));
    }
  },
});
export default taskFormats;
