import type { Harness } from '../contracts/harness';
import type { CanonicalMessage } from '../contracts/messages';
import type { ModelCallRecord } from '../contracts/records';
import type { Sandbox, SandboxLimits, SandboxProvider } from '../contracts/sandbox';
import type { Task, Verdict } from '../contracts/task';
import type { RolloutOutcome } from '../contracts/tree';
import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf } from '../errors';
import type { RolloutRequest, RolloutResult } from '../kernel/hooks';
import type { Kernel } from '../kernel/kernel';
import type { ServingProxy } from '../proxy/server';
import { fsWorkspace } from '../tasks/workspace';

/** One rollout to run: a task through a harness. */
export interface RolloutJob {
  rolloutId: string;
  step: number;
  task: Task;
  harness: Harness;
  harnessOptions?: Record<string, unknown>;
}

/** How one rollout ended, after any infra retries. */
export interface RolloutReport extends RolloutResult {
  rolloutId: string;
  /** The proxy session whose records belong to the final attempt. */
  sessionId: string;
  attempts: number;
  /** Verifier verdict, for ok / harness-error / timeout outcomes. */
  verdict?: Verdict;
  records: ModelCallRecord[];
}

export interface RunnerOptions {
  runId: string;
  proxy: ServingProxy;
  /** The proxy's Unix socket, bound into each sandbox. */
  socketPath: string;
  sandboxes: SandboxProvider;
  kernel?: Kernel;
  concurrency: number;
  /** Wall limit of one rollout (the task's own limit wins when set). */
  timeoutMs: number;
  /** Extra attempts after an infrastructure failure (never after a harness failure). */
  infraRetries: number;
  limits?: SandboxLimits;
  /** Where providers keep logs (image builds); default: the folder of `socketPath`. */
  logDir?: string;
  /** Extra read-only host paths the harnesses need inside sandboxes. */
  readOnlyPaths?: string[];
  model?: string;
  /** Sweep this run's leftovers from an earlier, killed runner before the first rollout (default true). */
  sweepOnStart?: boolean;
  onProgress?: (event: { kind: 'start' | 'done' | 'retry'; rolloutId: string; report?: RolloutReport; inFlight: number; done: number; total: number }) => void;
}

class InfraError extends Error {}

/** What a verifier may read of the conversation: the agent's final message and the conversation itself. */
export function verifyInputs(conversation: CanonicalMessage[] | undefined): { finalMessage?: string; conversation?: CanonicalMessage[] } {
  if (!conversation?.length) return {};
  const last = conversation[conversation.length - 1]!;
  const text = last.role === 'assistant' ? last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('') : '';
  return { finalMessage: text.trim(), conversation };
}

/**
 * Runs rollouts with bounded concurrency: for each, a sandbox, the task's workspace, a proxy
 * session, the harness, the verifier; then everything is torn down. Outcomes are classified
 * (ok / harness-error / timeout / infra-error); only infrastructure failures — sandbox, task
 * setup, engine or proxy failure, missing records, a verifier that throws — are retried, and
 * they are never scored as reward 0: they carry no reward and never enter training.
 */
export class RolloutRunner {
  private swept = false;

  constructor(private readonly o: RunnerOptions) {}

  /** Remove what an earlier, killed incarnation of this run left (processes, mounts, containers, dirs). */
  async sweepOrphans(): Promise<string[]> {
    return (await this.o.sandboxes.sweep(this.o.runId)).removed;
  }

  async run(jobs: readonly RolloutJob[], signal?: AbortSignal): Promise<RolloutReport[]> {
    this.refuseUnsupported(jobs);
    // Every rollout in flight listens to the signal (Node warns past 10: a run at concurrency 16).
    if (signal) setMaxListeners(0, signal);
    if (this.o.sweepOnStart !== false && !this.swept) {
      this.swept = true;
      await this.sweepOrphans();
    }
    const reports: RolloutReport[] = new Array(jobs.length);
    let next = 0;
    let inFlight = 0;
    let done = 0;
    const worker = async () => {
      while (next < jobs.length && !signal?.aborted) {
        const i = next++;
        inFlight++;
        this.o.onProgress?.({ kind: 'start', rolloutId: jobs[i]!.rolloutId, inFlight, done, total: jobs.length });
        reports[i] = await this.runWithRetries(jobs[i]!, signal);
        inFlight--;
        done++;
        this.o.onProgress?.({ kind: 'done', rolloutId: jobs[i]!.rolloutId, report: reports[i], inFlight, done, total: jobs.length });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency, jobs.length) }, worker));
    return reports.filter(Boolean);
  }

  /**
   * A task with its own image cannot run on a provider without images: refuse the whole batch
   * before any rollout, rather than letting every rollout fail as an infra error.
   */
  private refuseUnsupported(jobs: readonly RolloutJob[]): void {
    if (this.o.sandboxes.supportsEnvironments) return;
    const needing = [...new Set(jobs.filter((j) => j.task.environment).map((j) => j.task.id))];
    if (needing.length === 0) return;
    const list = needing.slice(0, 5).join(', ') + (needing.length > 5 ? ` and ${needing.length - 5} more` : '');
    throw new ClawGymError(ErrorCodes.SANDBOX_UNSUPPORTED,
      `${needing.length} task(s) need their own image (environment/Dockerfile) but the "${this.o.sandboxes.name}" sandbox runs no images: ${list}`,
      { hint: "use the Docker sandbox (sandbox: 'docker', @clawgym/sandbox-docker), or load Harbor tasks with environment: 'copy' to run them without their image (their Dockerfile's setup then never happens)" });
  }

  private async runWithRetries(job: RolloutJob, signal?: AbortSignal): Promise<RolloutReport> {
    let report: RolloutReport | undefined;
    for (let attempt = 1; attempt <= 1 + this.o.infraRetries; attempt++) {
      report = await this.attempt(job, attempt, signal);
      if (report.outcome !== 'infra-error' || signal?.aborted) break;
      if (attempt <= this.o.infraRetries) this.o.onProgress?.({ kind: 'retry', rolloutId: job.rolloutId, report, inFlight: 0, done: 0, total: 0 });
    }
    return report!;
  }

  private async attempt(job: RolloutJob, attempt: number, signal?: AbortSignal): Promise<RolloutReport> {
    const started = Date.now();
    const sessionId = attempt === 1 ? job.rolloutId : `${job.rolloutId}.retry${attempt - 1}`;
    let request: RolloutRequest = {
      runId: this.o.runId, rolloutId: sessionId, step: job.step, taskId: job.task.id, category: job.task.category,
      harness: job.harness.name, instruction: job.task.instruction, env: {}, tags: [], harnessOptions: job.harnessOptions ?? {},
    };
    let sandbox: Sandbox | undefined;
    let outcome: RolloutOutcome = 'ok';
    let verdict: Verdict | undefined;
    let details = '';
    let records: ModelCallRecord[] = [];
    const session = this.o.proxy.openSession(sessionId, { classify: job.harness.classifyCall?.bind(job.harness) });
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (this.o.kernel) request = await this.o.kernel.hooks.beforeRollout.promise(request);
      sandbox = await this.o.sandboxes.create({
        runId: this.o.runId, rolloutId: sessionId, limits: { ...this.o.limits, ...job.task.limits }, env: request.env,
        modelEndpoint: { socketPath: this.o.socketPath, url: session.baseUrl },
        environment: job.task.environment,
        ...(job.task.workspacePath !== undefined ? { workspacePath: job.task.workspacePath } : {}),
        // The proxy socket lives in the run's (or the evaluation's) folder: logs go beside it.
        logDir: this.o.logDir ?? dirname(this.o.socketPath),
        readOnlyPaths: [...new Set([...(this.o.readOnlyPaths ?? []), ...(job.harness.hostPaths?.(request.harnessOptions) ?? [])])],
      }).catch((err: unknown) => { throw new InfraError(`sandbox creation failed: ${messageOf(err)}`); });
      const workspace = fsWorkspace(sandbox.workspaceHostPath);
      await job.task.setup(workspace).catch((err: unknown) => { throw new InfraError(`task setup failed: ${messageOf(err)}`); });
      const result = await job.harness.run({
        sandbox, instruction: request.instruction, timeoutMs: job.task.timeLimitMs ?? this.o.timeoutMs, signal: abort.signal,
        endpoint: { baseUrl: sandbox.modelBaseUrl, apiKey: session.apiKey, model: this.o.model ?? 'clawgym-policy' },
        options: request.harnessOptions,
      }).catch((err: unknown) => { throw new InfraError(`harness could not be started: ${messageOf(err)}`); });
      const closed = await this.o.proxy.closeSession(sessionId);
      records = await this.o.proxy.records(sessionId);
      if (signal?.aborted) throw new InfraError('cancelled');
      if (closed.infraFailure) throw new InfraError(`engine or proxy failed: ${closed.infraFailure}`);
      // A harness that fails after the proxy refused one of its requests failed because of us.
      if (closed.refused && !result.timedOut && result.exitCode !== 0) throw new InfraError(`the harness failed (exit ${result.exitCode}) after the proxy refused its request: ${closed.refused}`);
      if (!result.timedOut && records.length === 0) throw new InfraError(`missing records: the harness made no model call (exit ${result.exitCode}): ${result.logTail.trim().split('\n').slice(-3).join(' | ')}`);
      outcome = result.timedOut ? 'timeout' : result.exitCode === 0 ? 'ok' : 'harness-error';
      // A sandbox whose workspace is not our folder (a remote Docker host) brings it back first.
      await sandbox.sync?.().catch((err: unknown) => { throw new InfraError(`workspace sync failed: ${messageOf(err)}`); });
      verdict = await job.task.verify(workspace, { sandbox, ...verifyInputs(closed.conversation) }).catch((err: unknown) => { throw new InfraError(`verifier failed: ${messageOf(err)}`); });
      details = outcome === 'ok' ? verdict.details : `${outcome} (exit ${result.exitCode}): ${verdict.details}`;
    } catch (err) {
      outcome = 'infra-error';
      details = err instanceof InfraError ? err.message : `runner failure: ${messageOf(err)}`;
      verdict = undefined;
      await this.o.proxy.closeSession(sessionId).catch(() => undefined);
      records = await this.o.proxy.records(sessionId).catch(() => []);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await sandbox?.destroy().catch(() => undefined);
    }
    const report: RolloutReport = {
      request, rolloutId: job.rolloutId, sessionId, attempts: attempt, outcome,
      // An infrastructure failure has no reward: it is never scored as 0.
      reward: outcome === 'infra-error' ? Number.NaN : verdict?.reward ?? 0,
      verdict, details, calls: records.length, durationMs: Date.now() - started, records,
    };
    if (this.o.kernel) await this.o.kernel.hooks.afterRollout.promise(report);
    return report;
  }
}
