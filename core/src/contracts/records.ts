import type { CallRole, Drift, FinishReason, TokenIds } from './engine';

/** The wire formats the serving proxy speaks. */
export type WireFormat = 'anthropic-messages' | 'openai-chat' | 'openai-responses' | 'gemini-generate-content';

/**
 * What a record's logprobs are: `processed` — of the distribution the engine sampled from (after
 * temperature and top-p: what importance weights need); `raw` — of the model's distribution
 * before them (vLLM's default `--logprobs-mode raw_logprobs`); `unknown` — the engine does not say.
 */
export type LogprobsMeaning = 'processed' | 'raw' | 'unknown';

/** The sampling settings of one call, as sent to the engine. */
export interface SamplingRecord {
  temperature: number;
  topP: number;
  /** Unset: no top-k (the engine's default of all tokens). */
  topK?: number;
  logprobs: LogprobsMeaning;
}

/** How a call's prompt ids were obtained. */
export type PromptOrigin =
  /** Extends call `parentCall`: its prompt ids + raw output ids were reused, only the suffix rendered. */
  | { kind: 'reuse'; parentCall: number; reusedTokens: number }
  /** The same messages as call `of` (a retry or regeneration): its prompt ids, reused verbatim. */
  | { kind: 'retry'; of: number }
  /** Rendered in full; `reason` says why no earlier call matched. */
  | { kind: 'fork'; reason: string };

/** What a harness made a call for (defined beside the engine's request, which carries it). */
export type { CallRole };

/**
 * A line of conversation within a rollout: the calls that extend (or re-send) one another. `id`
 * numbers the rollout's lines from 0 in the order they start; `cause` says what started a line:
 * the main agent's first call (`root`), a side call's own conversation (its role: `subagent`, `compaction`, `title`, `memory`,
 * `side`), the main agent going on from a compaction's summary (`compaction`, with `startedBy`
 * the compaction call), or a main history the harness rewrote (`fork`).
 */
export interface Lineage {
  id: number;
  cause: 'root' | 'fork' | Exclude<CallRole, 'main'>;
  startedBy?: number;
}

/** Whether a recorded role is a side call (anything but the main agent). */
export const isSideCall = (role: CallRole | undefined): boolean => role !== undefined && role !== 'main';

/**
 * One model call, recorded at token level. Appended durably to the run store before the
 * final event of the response is sent, so no answered call is ever lost.
 */
export interface ModelCallRecord {
  runId: string;
  rolloutId: string;
  /** 0-based index of this call within its rollout. */
  callIndex: number;
  wireFormat: WireFormat;
  /** Model name the harness asked for. */
  requestedModel: string;
  promptIds: TokenIds;
  outputIds: number[];
  /** Engine log-probability of each output id (same length as `outputIds`). */
  outputLogprobs: number[];
  finishReason: FinishReason;
  origin: PromptOrigin;
  /** How the prompt relates to the template's render of the whole conversation, and why. */
  drift?: Drift;
  /** The sampling settings the output was generated with, and what `outputLogprobs` are. */
  sampling?: SamplingRecord;
  policyVersion: number;
  /** Milliseconds since the epoch. */
  timings: { receivedAt: number; firstTokenAt?: number; finishedAt: number };
  /** What the harness made this call for (its classifier's answer; absent when it has none). */
  role?: CallRole;
  /** The line of conversation this call continues, and what started that line (see {@link Lineage}). */
  lineage?: Lineage;
  /**
   * Request features the proxy handled on purpose and how: deferred tools left out, tools it
   * cannot offer (refused, with the reason), a response schema and whether the reply met it.
   */
  notes?: string[];
}

/**
 * Where a scope's call records go: the proxy appends (durably, before the response ends) and
 * the tree builder reads. `CallStore` (one JSONL file per rollout) is the default; a plugin may
 * register another under `Tokens.CallStore`.
 */
export interface RecordStore {
  readonly dir: string;
  /** Resolves once the record is durable; appends of one rollout keep their order. */
  append(record: ModelCallRecord): Promise<void>;
  /** Every record of a rollout, in call order. */
  read(rolloutId: string): Promise<ModelCallRecord[]>;
  /** The records one at a time, in call order (a store without it is read whole by {@link read}). */
  stream?(rolloutId: string): AsyncIterable<ModelCallRecord>;
  /** The records without their prompt ids, in call order: what statistics read. */
  heads?(rolloutId: string): AsyncIterable<CallHead>;
  close(rolloutId: string): Promise<void>;
  closeAll(): Promise<void>;
}

/** A record without its prompt's ids: what statistics read (the ids of a long session are most of its size). */
export type CallHead = Omit<ModelCallRecord, 'promptIds'> & { promptLength: number };

/** A record's head: the record without its prompt ids, with their count. */
export function headOf({ promptIds, ...rest }: ModelCallRecord): CallHead {
  return { ...rest, promptLength: promptIds.length };
}

/**
 * What a rollout's report holds of each call: its head, and its prompt ids only where a runner
 * had them in memory anyway (the built-in runner reads heads; the step streams the ids from the store).
 */
export type CallSummary = Omit<ModelCallRecord, 'promptIds'> & { promptLength?: number; promptIds?: ModelCallRecord['promptIds'] };

/** How many prompt tokens a call had, from its head or its ids. */
export const promptLengthOf = (c: CallSummary): number => c.promptLength ?? c.promptIds?.length ?? 0;

/** Where the step reads a rollout's full records from, one at a time. */
export interface RecordSource {
  stream(rolloutId: string): AsyncIterable<ModelCallRecord>;
}
