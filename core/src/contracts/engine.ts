import type { PublishedWeights } from './weights';
import type { CanonicalConversation, CanonicalMessage, MessagePart, ToolCallPart, ToolSpec } from './messages';

/**
 * Token ids of a prompt: a compact Int32Array (4 bytes a token). The proxy hands out zero-copy
 * views of per-session buffers, so treat them as read-only.
 */
export type TokenIds = Int32Array;

/** Turns text into the engine's token ids and back. */
export interface Tokenizer {
  /** Encode plain text (no special tokens are added), 4 bytes an id: a 30 MB tool result through a byte-level tokenizer is 30M ids. */
  encode(text: string): TokenIds;
  /** Decode ids to text; special tokens decode to their literal form. */
  decode(ids: ArrayLike<number>): string;
  /** Number of distinct token ids. */
  readonly vocabSize: number;
}

/**
 * Renders canonical conversations into token ids and parses generated ids back into an
 * assistant message. Supplied by the engine plugin, because only the engine knows the
 * template its model was trained with.
 *
 * The proxy's token-in-token-out ledger relies on the split between `render` (a whole
 * conversation, ending with the generation prompt) and `renderContinuation` (what follows
 * an assistant reply we generated, whose raw ids are reused verbatim).
 */
export interface ChatTemplate {
  readonly name: string;
  /** Ids of the whole conversation (tools in the system part), ending with the generation prompt. */
  render(conversation: CanonicalConversation): TokenIds;
  /**
   * Ids that follow a generated assistant reply (its raw output ids, ending as `finishReason`
   * says) when the conversation continues with `next`, ending with the generation prompt.
   */
  renderContinuation(next: CanonicalMessage[], finishReason: FinishReason): TokenIds;
  /**
   * Parse generated ids into an assistant message; output that is not a valid tool call stays
   * text. `tools` are the request's (templates with a compact call syntax need their schemas).
   */
  parse(outputIds: readonly number[], tools?: readonly ToolSpec[]): CanonicalMessage;
  /** An incremental parser of generated ids, for streaming text and tool calls as they form. */
  streamParser(tools?: readonly ToolSpec[]): OutputStreamParser;
  /** Ids a model would generate for this assistant reply, ending with the stop id (demonstrations, scripted engines). */
  renderReply(parts: readonly MessagePart[], tools?: readonly ToolSpec[]): number[];
  /** Ids that end generation (e.g. `<|im_end|>`). */
  readonly stopIds: readonly number[];
  /**
   * Templates that may rewrite history (Jinja templates): the ids that follow a generated reply,
   * with how the reused prompt relates to the template's render of the whole conversation.
   * Without it the ledger uses {@link renderContinuation} and calls the prompt clean.
   */
  continueFrom?(history: ContinuationHistory, next: CanonicalMessage[], memo?: Record<string, unknown>): { ids: TokenIds; drift: Drift };
  /**
   * Called by the ledger once a call is answered, off the request path: prepare in `memo` (the
   * session's) what {@link continueFrom} would compute for a continuation of this call before
   * seeing its new messages. Optional; continueFrom must give the same answer without it.
   */
  primeContinuation?(history: ContinuationHistory, memo: Record<string, unknown>): void;
}

/** What the ledger knows of the call a new request extends. */
export interface ContinuationHistory {
  /** The earlier call's messages (its prompt). */
  messages: readonly CanonicalMessage[];
  /** The reply we returned for it. */
  reply: CanonicalMessage;
  tools: readonly ToolSpec[];
  /** The raw ids the engine generated (kept verbatim in the new prompt). */
  outputIds: readonly number[];
  finishReason: FinishReason;
}

/**
 * Template drift of one call (slime's classes): `clean` — the reused ids equal the template's
 * render of the whole conversation; `realigned` — the template would write the history
 * differently (Qwen3 drops earlier `<think>`, a reply tokenized another way), the raw ids the
 * engine saw are kept; `fork` — no earlier call extends to this one, rendered in full.
 */
export interface Drift { class: 'clean' | 'realigned' | 'fork'; reason: string }

/** What a stream parser has recognised so far in generated output. */
export type OutputEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_call'; call: ToolCallPart };

/** Feeds generated ids one at a time; returns events as soon as they are certain. */
export interface OutputStreamParser {
  push(tokenId: number): OutputEvent[];
  /**
   * Several ids at once, where nobody sees the events before the end (a JSON response): the
   * same message as pushing them one by one (eventsToMessage of the events), in one decode.
   */
  pushMany?(tokenIds: readonly number[]): OutputEvent[];
  /** Flush what is pending when generation ends (an unclosed tool call becomes text). */
  end(): OutputEvent[];
}

/** Why generation ended. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'error' | 'aborted';

/** Sampling settings for one call. */
export interface SamplingParams {
  maxTokens: number;
  temperature: number;
  topP: number;
  /** Extra stop ids on top of the template's. */
  stopIds?: readonly number[];
  seed?: number;
}

/** One generated token with the engine's log-probability of it. */
export interface GeneratedToken {
  tokenId: number;
  logprob: number;
}

/**
 * What an engine's stream yields: one token, or the tokens that reached it together, in order
 * (a vLLM or SGLang stream chunk, a finished Tinker sample, a scripted reply). A consumer takes
 * the tokens of a step in one go; {@link eachToken} (engine/token-steps.ts) gives them one by one.
 */
export type TokenStep = GeneratedToken | readonly GeneratedToken[];

/**
 * What a harness made a call for. `main` is the agent itself; every other role is a side call
 * (a subagent, a compaction summary, a title or summary, a memory-extraction agent, or `side`
 * when the harness does not say which), which never joins the main prefix tree and is left out
 * of the loss by the auxiliary-tree filter.
 */
export type CallRole = 'main' | 'subagent' | 'compaction' | 'title' | 'memory' | 'side';

/** A generation request: token ids in, a stream of tokens out. */
export interface GenerateRequest {
  promptIds: TokenIds;
  sampling: SamplingParams;
  /** The rollout this call belongs to (scripted engines and schedulers use it). */
  sessionId?: string;
  /** Aborted when the client goes away; the engine should stop soon after. */
  signal?: AbortSignal;
  /**
   * What the harness's classifier made of the call before it was generated (the role its record
   * will carry): undefined or `'main'` for the agent's own turn, a side call's role otherwise (a
   * title, a compaction, a subagent…). Engines may ignore it; a scripted one plays the agent's
   * turns on its main calls only, whatever side calls arrive beside them.
   */
  role?: CallRole;
}

/**
 * A policy model that serves generation with token ids in and out.
 * The embedded engine, a scripted engine and HTTP clients for vLLM/SGLang implement it.
 */
export interface Engine {
  readonly name: string;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate;
  /**
   * The most tokens one call holds, prompt and output together (the model's context). The proxy
   * refuses a longer prompt with the wire format's "prompt is too long" error, as vLLM and the
   * hosted APIs do, and caps the output at the room left. Unset: the engine is not asked.
   */
  readonly contextLength?: number;
  /**
   * What the logprobs this engine yields are (recorded with every call): `processed` — under the
   * distribution it sampled from; `raw` — before temperature / top-p (vLLM unless started with
   * `--logprobs-mode processed_logprobs`). Unset: `unknown`.
   */
  readonly logprobs?: 'processed' | 'raw';
  /**
   * Version of the weights currently serving; recorded with every call. With `sessionId`, the
   * version that served that session's latest call (replicas may serve different versions while
   * a sync is under way; a server reports which one served).
   */
  policyVersion(sessionId?: string): number;
  /**
   * Generate tokens; yields them as soon as they exist: each on its own, or those that arrived
   * together as one array (each step is a wait for the consumer, so an engine that holds several
   * tokens at once hands them over at once).
   */
  generate(request: GenerateRequest): AsyncIterable<TokenStep>;
  /**
   * Load the trainer's newest weights: `weights` when the trainer published them
   * ({@link PublishedWeights}); without it, engines that share the trainer's weights in process
   * have nothing to do.
   */
  syncWeights?(weights?: PublishedWeights): Promise<void>;
  close?(): Promise<void>;
}

/** Creates an engine for a run; registered by engine plugins. */
/** What an engine or trainer provider is created with. */
export interface ProviderContext {
  /** The run's directory (the engine and trainer of one run share it). */
  runDir: string;
  seed: number;
  /** The config's folder: relative paths in a slot's options (a checkpoint) resolve from it. */
  rootDir?: string;
}

export interface EngineProvider {
  readonly name: string;
  create(options: Record<string, unknown>, ctx: ProviderContext): Promise<Engine>;
}

/** A model folder loaded by a model-support package (`@clawgym/model-hf`): its tokenizer and chat template. */
export interface FolderChatModel {
  tokenizer: Tokenizer;
  /** The template, which also shows a first prompt as text (`clawgym template`). */
  chatTemplate: ChatTemplate & { renderPrompt(conversation: CanonicalConversation): { text: string; ids: TokenIds } };
  /** The model's context, when the folder says. */
  contextLength?: number;
}

/**
 * What core's commands need of a model-support package (`@clawgym/model-hf` exports it): load a
 * model folder. Core loads the package only where a command reads ids with a model's tokenizer.
 */
export interface ModelSupport {
  loadChatModel(dir: string, options?: { rootDir?: string; templateKwargs?: Record<string, unknown>; now?: () => Date }): FolderChatModel;
}
