import type { Harness } from '../contracts/harness';
import type { CanonicalMessage } from '../contracts/messages';
import type { CallSummary } from '../contracts/records';
import type { Sandbox, SandboxLimits, SandboxProvider, SandboxUsage } from '../contracts/sandbox';
import type { Task, Verdict } from '../contracts/task';
import type { InfraClass, RolloutOutcome } from '../contracts/tree';
import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';
import type { RolloutRequest, RolloutResult } from '../contracts/hooks';
import type { Kernel } from '../kernel/kernel';
import type { ServingProxy } from '../4-proxy/server';
import { fsWorkspace } from '../1-tasks/workspace';
import { fingerprintOf, type HarnessFingerprint } from '../3-harness/fingerprint/fingerprint';
import { faultOf, verifierBug, workspaceVerdict, type RolloutFault } from './verifier-bug';

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
  /** For an infra-error: which part failed (see {@link InfraClass}). */
  infraClass?: InfraClass;
  /**
   * Each call of the final attempt, in order. The built-in runner keeps heads (no prompt ids):
   * a session's ids stay in the store, from which the step streams them (see `trainOn`), so a
   * step's reports hold what statistics need and no rollout's prompts.
   */
  records: readonly CallSummary[];
  /** The harness process's exit in the sandbox (absent when it never ran to an end). */
  exit?: { code: number | null; timedOut: boolean };
  /** Milliseconds each phase of the final attempt took (a phase that never ran is absent). */
  phases?: RolloutPhases;
  /** A plugin's bug that ended the rollout (a verifier or a `beforeRollout` tap that threw), with its stack: never retried. */
  fault?: RolloutFault;
  /** What the final attempt's sandbox used, where its provider measures it (CPU seconds by cgroup). */
  usage?: SandboxUsage;
}

/** Where a rollout's time went: sandbox creation, task setup, the harness, verification. */
/**
 * Where a rollout's milliseconds went: creating the sandbox, the task's setup, the harness's run
 * (the CLI, with the proxy answering its calls), closing the proxy session and reading its call
 * records (with the fingerprint), and grading.
 */
export interface RolloutPhases { sandboxMs?: number; setupMs?: number; harnessMs?: number; recordsMs?: number; verifyMs?: number }

/** Default start-up limit: generous, since a CLI may install or index before its first call. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 300_000;

export interface RunnerOptions {
  runId: string;
  /** The run's project folder: its sandboxes carry it, and the start-up sweep keeps to it. */
  project?: string;
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
  /**
   * A harness that has asked for no completion this long after it started is stopped: the
   * rollout is an infra failure of class `harness-start` (never a reward-0 timeout), as is one
   * that reached its wall limit with no call at all. Default {@link DEFAULT_STARTUP_TIMEOUT_MS}.
   */
  startupTimeoutMs?: number;
  limits?: SandboxLimits;
  /** Where providers keep logs (image builds); default: the folder of `socketPath`. */
  logDir?: string;
  /** Extra read-only host paths the harnesses need inside sandboxes. */
  readOnlyPaths?: string[];
  model?: string;
  /** Sweep this run's leftovers from an earlier, killed runner before the first rollout (default true). */
  sweepOnStart?: boolean;
  onProgress?: (event: { kind: 'start' | 'done' | 'retry'; rolloutId: string; report?: RolloutReport; inFlight: number; done: number; total: number }) => void;
  /** Names a task's suite and its plugin (`task suite "x" (plugin "y", pkg@1.0.0)`), for a verifier's bug. */
  suiteOf?: (task: Task) => string | undefined;
}

class InfraError extends Error {
  constructor(readonly infraClass: InfraClass, message: string) { super(message); }
}

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
 * setup, engine or proxy failure, missing records, a verifier's machinery (a ClawGymError it
 * raised) — are retried, and they are never scored as reward 0: they carry no reward and never
 * enter training. A verifier that throws an error of its own is a bug in its plugin: the rollout
 * carries it as its `fault` (with the stack), unscored, and is not retried.
 */
export class RolloutRunner {
  private swept = false;

  constructor(private readonly o: RunnerOptions) {}

  /** Remove what an earlier, killed incarnation of this run left (processes, mounts, containers, dirs). */
  async sweepOrphans(): Promise<string[]> {
    return (await this.o.sandboxes.sweep(this.o.runId, this.o.project === undefined ? undefined : { project: this.o.project })).removed;
  }

  /** Run `jobs`; `onProgress` hears this batch's events besides the runner's own listener. */
  async run(jobs: readonly RolloutJob[], signal?: AbortSignal, onProgress?: RunnerOptions['onProgress']): Promise<RolloutReport[]> {
    const progress: RunnerOptions['onProgress'] = (e) => { this.o.onProgress?.(e); onProgress?.(e); };
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
        progress({ kind: 'start', rolloutId: jobs[i]!.rolloutId, inFlight, done, total: jobs.length });
        reports[i] = await this.runWithRetries(jobs[i]!, signal);
        inFlight--;
        done++;
        progress({ kind: 'done', rolloutId: jobs[i]!.rolloutId, report: reports[i], inFlight, done, total: jobs.length });
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

  /** Each harness's CLI version, asked once per harness and options. */
  private readonly versions = new Map<string, Promise<string | undefined>>();

  private cliVersion(harness: Harness, options: Record<string, unknown>): Promise<string | undefined> {
    if (!harness.version) return Promise.resolve(undefined);
    const key = `${harness.name}\0${JSON.stringify(options)}`;
    let v = this.versions.get(key);
    if (!v) this.versions.set(key, v = harness.version(options).catch(() => undefined));
    return v;
  }

  private async runWithRetries(job: RolloutJob, signal?: AbortSignal): Promise<RolloutReport> {
    let report: RolloutReport | undefined;
    for (let attempt = 1; attempt <= 1 + this.o.infraRetries; attempt++) {
      report = await this.attempt(job, attempt, signal);
      if (report.outcome !== 'infra-error' || report.fault || signal?.aborted) break;
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
    let infraClass: InfraClass | undefined;
    let fault: RolloutFault | undefined;
    let exit: RolloutReport['exit'];
    const phases: RolloutPhases = {};
    let mark = started;
    const lap = () => { const now = Date.now(); const ms = now - mark; mark = now; return ms; };
    let startupExpired = false;
    let records: CallSummary[] = [];
    let fingerprint: HarnessFingerprint | undefined;
    let usage: SandboxUsage | undefined;
    const session = this.o.proxy.openSession(sessionId, { classify: job.harness.classifyCall?.bind(job.harness) });
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (this.o.kernel) request = await this.o.kernel.hooks.beforeRollout.promise(request);
      // The CLI's version (for the fingerprint) is asked now, beside the rollout: asked after the
      // harness ran, its start-up (seconds for a Node CLI on a busy machine) held up the rollout.
      const version = this.cliVersion(job.harness, request.harnessOptions);
      sandbox = await this.o.sandboxes.create({
        runId: this.o.runId, ...(this.o.project ? { project: this.o.project } : {}), rolloutId: sessionId, limits: { ...this.o.limits, ...job.task.limits }, env: request.env,
        modelEndpoint: { socketPath: this.o.socketPath, url: session.baseUrl },
        environment: job.task.environment,
        ...(job.task.workspacePath !== undefined ? { workspacePath: job.task.workspacePath } : {}),
        // The proxy socket lives in the run's (or the evaluation's) folder: logs go beside it.
        logDir: this.o.logDir ?? dirname(this.o.socketPath),
        readOnlyPaths: [...new Set([...(this.o.readOnlyPaths ?? []), ...(job.harness.hostPaths?.(request.harnessOptions) ?? [])])],
      }).catch((err: unknown) => { throw new InfraError('sandbox', `sandbox creation failed: ${messageOf(err)}`); });
      phases.sandboxMs = lap();
      const workspace = fsWorkspace(sandbox.workspaceHostPath);
      await job.task.setup(workspace).catch((err: unknown) => { throw new InfraError('task-setup', `task setup failed: ${messageOf(err)}`); });
      phases.setupMs = lap();
      const timeoutMs = job.task.timeLimitMs ?? this.o.timeoutMs;
      const startupMs = this.o.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
      // Past the start-up limit with no completion asked for, the harness is stuck before the
      // policy had any say: stopped now, not at the wall limit, and never scored.
      const startup = startupMs < timeoutMs ? setTimeout(() => {
        if (this.o.proxy.firstCallAt(sessionId) === undefined) { startupExpired = true; abort.abort(); }
      }, startupMs) : undefined;
      const result = await job.harness.run({
        sandbox, instruction: request.instruction, timeoutMs, signal: abort.signal,
        endpoint: { baseUrl: sandbox.modelBaseUrl, apiKey: session.apiKey, model: this.o.model ?? 'clawgym-policy' },
        options: request.harnessOptions,
      }).catch((err: unknown) => { throw new InfraError('harness-start', `harness could not be started: ${messageOf(err)}`); })
        .finally(() => clearTimeout(startup));
      const firstCallAt = this.o.proxy.firstCallAt(sessionId);
      phases.harnessMs = lap();
      exit = { code: result.exitCode, timedOut: result.timedOut };
      const closed = await this.o.proxy.closeSession(sessionId);
      records = await this.o.proxy.heads(sessionId);
      const firstMain = this.o.proxy.firstMainCall(sessionId);
      if (firstMain) {
        const box = sandbox;
        fingerprint = fingerprintOf(firstMain, job.harness.name, {
          cliVersion: await version, paths: [box.workspacePath, box.homePath, box.workspaceHostPath],
        });
      }
      phases.recordsMs = lap();
      if (signal?.aborted) throw new InfraError('cancelled', 'cancelled');
      if (startupExpired || (result.timedOut && firstCallAt === undefined)) {
        throw new InfraError('harness-start', `the harness made no model call within ${startupExpired ? `the start-up limit of ${startupMs} ms` : `its time limit of ${timeoutMs} ms`}: stuck before its first call (raise run.startupTimeoutMs if it needs longer to start): ${result.logTail.trim().split('\n').slice(-3).join(' | ')}`);
      }
      if (closed.infraFailure) throw new InfraError('engine', `engine or proxy failed: ${closed.infraFailure}`);
      // A harness that fails after the proxy refused one of its requests failed because of us.
      if (closed.refused && !result.timedOut && result.exitCode !== 0) throw new InfraError('refused', `the harness failed (exit ${result.exitCode}) after the proxy refused its request: ${closed.refused}`);
      if (!result.timedOut && records.length === 0) throw new InfraError(firstCallAt === undefined ? 'harness-start' : 'records', `missing records: the harness made no model call (exit ${result.exitCode}): ${result.logTail.trim().split('\n').slice(-3).join(' | ')}`);
      outcome = result.timedOut ? 'timeout' : result.exitCode === 0 ? 'ok' : 'harness-error';
      // A sandbox whose workspace is not our folder (a remote Docker host) brings it back first.
      await sandbox.sync?.().catch((err: unknown) => { throw new InfraError('sync', `workspace sync failed: ${messageOf(err)}`); });
      verdict = await job.task.verify(workspace, { sandbox, ...verifyInputs(closed.conversation) }).catch((err: unknown) => {
        const wrong = workspaceVerdict(err);
        if (wrong) return wrong;
        throw isClawGymError(err) ? new InfraError('verifier', `verifier failed: ${messageOf(err)}`) : verifierBug(job.task, this.o.suiteOf?.(job.task), err);
      });
      phases.verifyMs = lap();
      details = outcome === 'ok' ? verdict.details : `${outcome} (exit ${result.exitCode}): ${verdict.details}`;
    } catch (err) {
      outcome = 'infra-error';
      fault = faultOf(err);
      infraClass = err instanceof InfraError ? err.infraClass : fault?.code === ErrorCodes.VERIFIER_BUG ? 'verifier' : 'runner';
      details = err instanceof InfraError || fault ? messageOf(err) : `runner failure: ${messageOf(err)}`;
      verdict = undefined;
      await this.o.proxy.closeSession(sessionId).catch(() => undefined);
      records = await this.o.proxy.heads(sessionId).catch(() => []);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // What the sandbox used, for the run's cost accounting: read before it is destroyed.
      usage = await sandbox?.usage?.().catch(() => undefined);
      await sandbox?.destroy().catch(() => undefined);
    }
    const report: RolloutReport = {
      request, rolloutId: job.rolloutId, sessionId, attempts: attempt, outcome,
      // An infrastructure failure has no reward: it is never scored as 0.
      reward: outcome === 'infra-error' ? Number.NaN : verdict?.reward ?? 0,
      verdict, details, calls: records.length, durationMs: Date.now() - started, records, exit, phases,
      ...(infraClass ? { infraClass } : {}),
      ...(fingerprint ? { fingerprint } : {}),
      ...(fault ? { fault } : {}),
      ...(usage ? { usage } : {}),
    };
    if (this.o.kernel) await this.o.kernel.hooks.afterRollout.promise(report);
    return report;
  }
}
