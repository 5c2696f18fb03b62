import type { ProviderCheck } from './check';
import type { CanonicalConversation } from './messages';
import type { CallRole, WireFormat } from './records';
import type { Sandbox } from './sandbox';
import type { OracleTurn } from './task';

/** Where and how the harness reaches the model: its proxy session. */
export interface ModelEndpoint {
  /** Base URL as seen from inside the sandbox, e.g. `http://127.0.0.1:PORT/s/<rollout>`. */
  baseUrl: string;
  /** The session's secret key. */
  apiKey: string;
  /** Model name the harness should ask for. */
  model: string;
}

/** Everything one harness run gets. */
export interface HarnessRunContext {
  sandbox: Sandbox;
  endpoint: ModelEndpoint;
  instruction: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Per-rollout options merged from config and `beforeRollout` taps. */
  options: Record<string, unknown>;
}

/** How a harness run ended, from the harness's own point of view. */
export interface HarnessRunResult {
  exitCode: number | null;
  timedOut: boolean;
  /** Last lines of output, for diagnosing failures. */
  logTail: string;
}

/**
 * An agent harness treated as a black box: a CLI we install, configure per rollout and
 * point at the proxy. We never patch it.
 */
/**
 * Runs a command where the harness will run (`Harness.version`'s second argument): inside a
 * sandbox when its system is not this machine's (a container image, another root filesystem).
 */
export type CommandRunner = (argv: readonly string[]) => Promise<{ exitCode: number | null; stdout: string; stderr: string }>;

export interface Harness {
  readonly name: string;
  /** The wire format it speaks to the model. */
  readonly wireFormat: WireFormat;
  /**
   * The npm package of its CLI (e.g. `@anthropic-ai/claude-code`), for the run lock: where the
   * slot gives no `bin`, the lock records the version and integrity of this package as the
   * project resolves it. Unset for harnesses that are no separate CLI.
   */
  readonly cliPackage?: string;
  /**
   * Is it installed and runnable here, with these options (the slot's: a `bin` path among
   * them)? `clawgym doctor` and the preflight of `run`, `eval` and `sft` ask; `install` says how
   * when not.
   */
  check(options?: Record<string, unknown>): Promise<ProviderCheck>;
  /**
   * Host folders the harness needs inside sandboxes, bound read-only at the same path (its CLI
   * installed outside /usr, a script of the plugin). Given the per-rollout options.
   */
  hostPaths?(options: Record<string, unknown>): string[];
  /**
   * The CLI's version with these options (its `--version`), recorded in the run's harness
   * fingerprint so that an upgrade is named when what it sends changes. Default: unknown.
   * With `run`, the command runs through it (inside a sandbox: `clawgym doctor` on an image).
   */
  version?(options: Record<string, unknown>, run?: CommandRunner): Promise<string | undefined>;
  /** Run one rollout to completion inside `ctx.sandbox`. */
  run(ctx: HarnessRunContext): Promise<HarnessRunResult>;
  /**
   * Tell main-agent calls from side calls (subagents, compaction, titles and summaries, memory
   * extraction) by the request the harness sent. Recorded as `role`; side calls never join the
   * main prefix tree. Default: a call asking for a JSON-schema reply is a `title` side call, the
   * rest are decided by shared prefix alone.
   */
  classifyCall?(conversation: CanonicalConversation, requestedModel: string, request: CallRequestInfo): CallRole;
  /**
   * One call of a task's oracle (written in agentloop's tool vocabulary: `read_file`,
   * `write_file`, `list_files`, `bash`) made with this harness's own tools, so the oracle can
   * play, and make demonstrations, through it. Default: the call as it is.
   */
  oracleCall?(call: OracleToolCall): OracleToolCall;
}

/** What a classifier may read of a request beyond its conversation. */
export interface CallRequestInfo {
  /** The JSON schema the reply must follow (`output_config.format`, `text.format`, `response_format`). */
  responseSchema?: Record<string, unknown>;
}

/** One tool call of an oracle turn. */
export type OracleToolCall = OracleTurn['toolCalls'][number];

/**
 * What a harness sends the model besides the task, in short: a hash of its system prompt, each
 * tool's name with a hash of its schema (description and parameters), and the CLI's version. A
 * release that changes any of them changes what the policy is trained on.
 */

export interface HarnessFingerprint {
  harness: string;
  cliVersion?: string;
  /** sha256 of the system prompt (first 16 hex digits), per-rollout text masked (`maskRolloutText`). */
  system: string;
  /** Tool name → sha256 of its description and parameters (first 16 hex digits), sorted by name. */
  tools: Record<string, string>;
}
