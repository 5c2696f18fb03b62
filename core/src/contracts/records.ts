import type { Drift, FinishReason, TokenIds } from './engine';

/** The wire formats the serving proxy speaks. */
export type WireFormat = 'anthropic-messages' | 'openai-chat' | 'openai-responses';

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
  /** Whether the harness made this call for the main agent or a side task (title, summary, subagent). */
  role?: 'main' | 'side';
}
