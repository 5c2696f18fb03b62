/**
 * ClawGym-Task's grading, as ClawGym-RL runs it (`RL/clawgym_rl_rollout.py` of
 * ClawGym/ClawGym-Agents): after the agent ended, the task's `reward/` folder is copied to
 * `<workspace>/reward/` (replacing whatever the agent wrote there), the payload
 * (`final_message`, `metadata`, `transcript`) is written to
 * `<workspace>/.openclaw_reward_payload.json` and named by `OPENCLAW_REWARD_PAYLOAD`, and
 * `bash <workspace>/reward/reward.sh` runs with a 120 s limit; its last non-empty stdout line,
 * read with Python's `float()`, is the reward.
 *
 * Where we differ, on purpose: ClawGym-RL scores a reward.sh that exits non-zero or prints no
 * number as 0.0, which trains the policy on a broken verifier; here that is a verifier fault
 * (a ClawGymError the runner counts as an infrastructure failure, never trained on) with the
 * script's stderr in its message. A score outside [0, 1] is clamped (with a note), a NaN or
 * infinite one is a fault. A reward.sh that runs past its limit scores 0 as there (the agent's
 * own scripts, which some checks run, can hang it).
 */
import { posix } from 'node:path';
import { ClawGymError, ErrorCodes, type CanonicalMessage, type ExecResult, type Sandbox, type Verdict } from '@clawgym/core';
import { openclawTranscript } from './openclaw-transcript';
import { pyFloat, pySplitLines, pyStrip } from './py-float';
import { outputTail } from './verifier-script';

/** Where ClawGym-Task's files and reward scripts expect the workspace. */
export const OPENCLAW_WORKSPACE = '/root/.openclaw/workspace';
/** The payload file, in the workspace. */
export const PAYLOAD_FILE = '.openclaw_reward_payload.json';
/** reward.sh's time limit in ClawGym-RL (`_REWARD_TIMEOUT_SECONDS`). */
export const REWARD_TIMEOUT_MS = 120_000;

/** What reward.sh's run said: a score, a timeout, or a fault (why). */
export type RewardReading = { score: number } | { timedOut: true } | { fault: string };

/**
 * Read a finished reward.sh as ClawGym-RL does (`_run_reward`, `_parse_reward_stdout`), with its
 * silent zeros named as faults (see the file comment).
 */
export function readRewardRun(run: ExecResult): RewardReading {
  if (run.timedOut) return { timedOut: true };
  if (run.exitCode !== 0) return { fault: run.signal ? `was killed by ${run.signal}` : `exited with status ${run.exitCode}` };
  const lines = pySplitLines(run.stdout).map(pyStrip).filter(Boolean);
  if (!lines.length) return { fault: 'printed nothing on stdout' };
  const last = lines[lines.length - 1]!;
  const score = pyFloat(last);
  if (score === undefined) return { fault: `printed ${JSON.stringify(last.slice(0, 120))} on its last line, which is not a number` };
  if (!Number.isFinite(score)) return { fault: `printed ${last} as the score` };
  return { score };
}

/** What the grader is given of the task and the rollout. */
export interface ClawGymGradeInput {
  taskId: string;
  /** Host folder of the task's `reward/`. */
  rewardDir: string;
  /** data_entry.json's `metadata`. */
  metadata: Record<string, unknown>;
  finalMessage?: string;
  conversation?: readonly CanonicalMessage[];
  timeoutMs?: number;
  /** Reward at or above which the verdict passes; default: above 0.5, as ClawGym-RL counts a task correct. */
  passThreshold?: number;
}

async function must(sandbox: Sandbox, argv: string[], what: string): Promise<void> {
  const r = await sandbox.exec(argv, { timeoutMs: 30_000, modelForwarder: false });
  if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `could not ${what} in the sandbox (exit ${r.exitCode}): ${r.stderr.trim()}`);
}

/** Grade a finished rollout of a ClawGym-Task task inside its sandbox (see the file comment). */
export async function gradeClawGym(sandbox: Sandbox, input: ClawGymGradeInput): Promise<Verdict> {
  const ws = sandbox.workspacePath;
  if (ws !== OPENCLAW_WORKSPACE) {
    throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `task ${input.taskId}: the workspace is at ${ws} in the sandbox, but its reward.sh reads ${OPENCLAW_WORKSPACE}`, {
      hint: 'the task asks for its workspace there (workspacePath): run it on a sandbox that places it (bubblewrap, Docker)',
    });
  }
  const reward = posix.join(ws, 'reward');
  await must(sandbox, ['rm', '-rf', '--', reward], 'remove the reward/ folder the agent left');
  await sandbox.copyIn(input.rewardDir, reward);
  const payload = {
    final_message: input.finalMessage ?? '',
    metadata: input.metadata,
    transcript: input.conversation ? openclawTranscript(input.conversation, { sessionId: input.taskId, cwd: ws }) : [],
  };
  await sandbox.writeFile(posix.join(ws, PAYLOAD_FILE), JSON.stringify(payload));
  const timeoutMs = input.timeoutMs ?? REWARD_TIMEOUT_MS;
  const run = await sandbox.exec(['bash', posix.join(reward, 'reward.sh')], {
    cwd: ws,
    env: { OPENCLAW_REWARD_PAYLOAD: posix.join(ws, PAYLOAD_FILE), LC_ALL: 'C.UTF-8' },
    timeoutMs,
    modelForwarder: false,
  });
  const got = readRewardRun(run);
  if ('fault' in got) {
    throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `task ${input.taskId}: reward/reward.sh ${got.fault}, so it gave no score\n${outputTail(run)}`, {
      hint: 'a verifier fault, not a reward of 0: check that the sandbox has what reward.sh runs (python3) and that check.py works on this workspace',
    });
  }
  if ('timedOut' in got) {
    return { reward: 0, pass: false, details: [`reward/reward.sh ran past its ${Math.round(timeoutMs / 1000)} s limit: reward 0`, outputTail(run)].filter(Boolean).join('\n') };
  }
  const clamped = Math.min(1, Math.max(0, got.score));
  const pass = input.passThreshold === undefined ? clamped > 0.5 : clamped >= input.passThreshold;
  return {
    reward: clamped,
    pass,
    details: [
      `score ${got.score} from reward/reward.sh`,
      clamped !== got.score ? `${got.score} clamped to [0, 1]` : '',
      pass ? '' : outputTail(run),
    ].filter(Boolean).join('\n'),
  };
}
