/**
 * Verifier scripts that run inside the rollout's sandbox after the agent finished. Their files
 * are copied in only now, to a folder under the sandbox's HOME (outside the workspace), after
 * removing whatever the agent may have planted there; so the agent never saw them.
 */
import { posix } from 'node:path';
import { ClawGymError, ErrorCodes, type ExecResult, type Sandbox, type VerifyContext } from '@clawgym/core';

/** Folder under the sandbox's HOME where verifier files go at verify time. */
export const VERIFIER_DIR = '.clawgym-verifier';

/** The sandbox a script verifier needs, or a {@link ClawGymError} saying why it is missing. */
export function requireSandbox(context: VerifyContext | undefined, taskId: string): Sandbox {
  if (context?.sandbox) return context.sandbox;
  throw new ClawGymError(ErrorCodes.TASK_NEEDS_SANDBOX, `task ${taskId} is verified by a script inside the rollout's sandbox, and verify() was given no sandbox`, {
    hint: 'verify through the rollout runner (it passes { sandbox }), or call task.verify(workspace, { sandbox }) with a live sandbox',
  });
}

/** Where a verifier's files lie inside the sandbox. */
export interface HiddenPaths {
  /** `<HOME>/.clawgym-verifier` */
  base: string;
  /** The copied folder: `<base>/<name>`. */
  dir: string;
  /** An empty, writable folder for reward files: `<base>/logs/verifier`. */
  rewardDir: string;
}

async function must(sandbox: Sandbox, argv: string[]): Promise<void> {
  const r = await sandbox.exec(argv, { timeoutMs: 30_000 });
  if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `${argv.join(' ')} failed in the sandbox (exit ${r.exitCode}): ${r.stderr.trim()}`);
}

/** Copy a host folder into the sandbox as `<HOME>/.clawgym-verifier/<name>`, wiping that folder first. */
export async function copyInHidden(sandbox: Sandbox, hostDir: string, name: string): Promise<HiddenPaths> {
  const base = posix.join(sandbox.homePath, VERIFIER_DIR);
  const paths = { base, dir: posix.join(base, name), rewardDir: posix.join(base, 'logs', 'verifier') };
  await must(sandbox, ['rm', '-rf', base]);
  await sandbox.copyIn(hostDir, paths.dir);
  await must(sandbox, ['mkdir', '-p', paths.rewardDir]);
  return paths;
}

/** Remove files from the workspace before a script runs (reward files the agent wrote itself); returns those that existed. */
export async function removeStale(sandbox: Sandbox, names: string[]): Promise<string[]> {
  const r = await sandbox.exec(['sh', '-c', 'for f in "$@"; do if [ -e "$f" ]; then echo "$f"; rm -rf -- "$f"; fi; done', 'sh', ...names], { timeoutMs: 30_000 });
  return r.stdout.split('\n').filter(Boolean);
}

/** A file's text inside the sandbox, or undefined when it is not there. */
export async function readInside(sandbox: Sandbox, path: string): Promise<string | undefined> {
  const r = await sandbox.exec(['cat', '--', path], { timeoutMs: 30_000 });
  return r.exitCode === 0 ? r.stdout : undefined;
}

/** The last `n` characters of a script's output, for details. */
export function outputTail(r: ExecResult, n = 1500): string {
  const both = [r.stdout.trim() && `stdout:\n${r.stdout.trim()}`, r.stderr.trim() && `stderr:\n${r.stderr.trim()}`].filter(Boolean).join('\n');
  return both.length > n ? `…${both.slice(-n)}` : both;
}

/** How a script ended, in words. */
export function howItEnded(r: ExecResult, timeoutMs: number): string {
  if (r.timedOut) return `timed out after ${Math.round(timeoutMs / 1000)} s`;
  return r.signal ? `killed by ${r.signal}` : `exit ${r.exitCode}`;
}

/** A score read from text: a number, clamped to [0, 1] (with a note when it had to be). */
export function parseScore(text: string): { reward: number; note?: string } | { error: string } {
  const t = text.trim();
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) return { error: `${JSON.stringify(t.slice(0, 80))} is not a number` };
  if (n < 0 || n > 1) return { reward: Math.min(1, Math.max(0, n)), note: `${n} clamped to [0, 1]` };
  return { reward: n };
}

/** The reward of a Harbor-style `reward.json`: its `reward` field, or its only numeric field. */
export function parseRewardJson(text: string): { reward: number; note?: string } | { error: string } {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return { error: 'is not valid JSON' }; }
  if (typeof v === 'number') return parseScore(String(v));
  if (!v || typeof v !== 'object') return { error: 'is not a JSON object' };
  const o = v as Record<string, unknown>;
  if (typeof o.reward === 'number') return parseScore(String(o.reward));
  const nums = Object.entries(o).filter(([, x]) => typeof x === 'number');
  if (nums.length === 1) return parseScore(String(nums[0]![1]));
  return { error: `has no numeric "reward" field (keys: ${Object.keys(o).join(', ') || 'none'})` };
}
