import type { ChatTemplate, Engine, GenerateRequest, TokenStep, Tokenizer } from '../../contracts/engine';
import type { MessagePart } from '../../contracts/messages';
import { isSideCall, type CallRole } from '../../contracts/records';
import { ClawGymError, ErrorCodes } from '../../errors';
import { byteChatMl } from './byte-chatml';
import { newToolCallId } from './chatml';
import { appendAll } from '../../util/append';
import type { PublishedWeights } from '../../contracts/weights';

/** One scripted assistant turn, or a fault to inject. */
export interface ScriptedTurn {
  text?: string;
  thinking?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** Raw text emitted as-is (e.g. a malformed `<tool_call>`), after `text`. */
  raw?: string;
  /** Fail before the first token. */
  failBefore?: string;
  /** Fail after this many tokens. */
  failAfterTokens?: number;
  /** Never produce a token (until aborted). */
  hang?: boolean;
  /** Pause between tokens, to make streaming observable. */
  delayMsPerToken?: number;
}

/** What a script sees for each call. */
export interface ScriptContext {
  sessionId: string;
  /** 0-based index of this call within the session. */
  callIndex: number;
  /** The call's role as the harness classified it (undefined: not classified; see GenerateRequest.role). */
  role?: CallRole;
  /** 0-based index of this call among the session's main calls (side calls not counted; for a side call, the main calls before it). */
  mainCallIndex: number;
  /** The prompt, decoded (the script may read the task from it). */
  prompt: string;
}

export type Script = (ctx: ScriptContext) => ScriptedTurn | Promise<ScriptedTurn>;

/** The assistant turns before the one a ChatML prompt asks for (its last `<|im_start|>assistant` opens the reply). */
const chatMlTurn = (prompt: string) => Math.max(0, prompt.split('<|im_start|>assistant').length - 2);

/**
 * A script of fixed replies: call N of a session gets reply N (the last repeats); a call without
 * a session (one served over HTTP, `clawgym engine serve`) gets the reply of its conversation's
 * turn, counted by the assistant turns in its (ChatML) prompt.
 */
export function repliesByTurn(replies: readonly ScriptedTurn[]): Script {
  return ({ sessionId, callIndex, prompt }) => {
    const turn = sessionId === 'default' ? chatMlTurn(prompt) : callIndex;
    return replies[Math.min(turn, replies.length - 1)]!;
  };
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

/**
 * An engine that plays a script: each call's reply (text, tool calls, or a fault) is encoded
 * through the real tokenizer and template, so records hold the ids a model would have produced
 * (logprob 0: the script is certain). Used by tests and to play oracle demonstrations.
 */
export class ScriptedEngine implements Engine {
  readonly name = 'scripted';
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate;
  private readonly calls = new Map<string, number>();
  private readonly mainCalls = new Map<string, number>();
  /** Set to stand for a model with this context: the proxy then refuses longer prompts and caps output. */
  contextLength?: number;
  /** The version of the weights last loaded ({@link syncWeights}); 0: none. */
  protected version = 0;

  /** `template`: the tokenizer and chat template to encode replies with (default: byte-level ChatML). */
  constructor(private readonly script: Script, template?: { tokenizer: Tokenizer; chatTemplate: ChatTemplate }) {
    const { tokenizer, chatTemplate } = template ?? byteChatMl();
    this.tokenizer = tokenizer;
    this.chatTemplate = chatTemplate;
  }

  policyVersion(): number {
    return this.version;
  }

  /**
   * A script holds no weights: publishing any is refused. The stand-ins' engine
   * (`@clawgym/standins`) scores its replies with a unigram policy and loads that policy's weights.
   */
  async syncWeights(weights?: PublishedWeights): Promise<void> {
    if (!weights) return;
    throw new ClawGymError(ErrorCodes.ENGINE_FAILED, 'the scripted engine holds no weights to load', { hint: 'Give the scripted engine a tokenizer (`clawgym engine serve --tokenizer`, from @clawgym/standins): it then scores its replies with the unigram policy the trainer publishes.' });
  }

  /** A reply token's logprob: 0, the script is certain (a subclass may score replies under a policy). */
  protected logprob(_id: number): number {
    return 0;
  }

  /** Token ids of a scripted turn, as the model would write them (ending with `<|im_end|>`). */
  replyIds(turn: ScriptedTurn): number[] {
    const parts: MessagePart[] = [];
    if (turn.thinking) parts.push({ type: 'thinking', text: turn.thinking });
    if (turn.text) parts.push({ type: 'text', text: turn.text });
    for (const c of turn.toolCalls ?? []) parts.push({ type: 'tool_call', id: newToolCallId(), name: c.name, arguments: JSON.stringify(c.arguments) });
    const ids = this.chatTemplate.renderReply(parts);
    // Before the closing <|im_end|>; no spread: a long raw reply would overflow the argument list.
    if (turn.raw) { const end = ids.pop()!; appendAll(ids, this.tokenizer.encode(turn.raw)).push(end); }
    return ids;
  }

  async *generate(request: GenerateRequest): AsyncIterable<TokenStep> {
    const sessionId = request.sessionId ?? 'default';
    const callIndex = this.calls.get(sessionId) ?? 0;
    this.calls.set(sessionId, callIndex + 1);
    const mainCallIndex = this.mainCalls.get(sessionId) ?? 0;
    if (!isSideCall(request.role)) this.mainCalls.set(sessionId, mainCallIndex + 1);
    const tokenizer = this.tokenizer;
    // Decoded only for a script that reads it: a 30 MB prompt decodes to another 30 MB string and more.
    const turn = await this.script({ sessionId, callIndex, mainCallIndex, ...(request.role ? { role: request.role } : {}), get prompt() { return tokenizer.decode(request.promptIds); } });
    if (turn.failBefore) throw new ClawGymError(ErrorCodes.ENGINE_FAILED, turn.failBefore);
    if (turn.hang) {
      await new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve(), { once: true }));
      return;
    }
    const ids = this.replyIds(turn).slice(0, request.sampling.maxTokens);
    if (!turn.delayMsPerToken) {
      // The whole reply exists at once: one step (up to a scripted failure, then the failure).
      const fail = turn.failAfterTokens !== undefined && turn.failAfterTokens < ids.length ? turn.failAfterTokens : undefined;
      if (request.signal?.aborted) return;
      const tokens = ids.slice(0, fail).map((tokenId) => ({ tokenId, logprob: this.logprob(tokenId) }));
      if (tokens.length) yield tokens;
      if (fail !== undefined) throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `scripted failure after ${fail} tokens`);
      return;
    }
    for (let i = 0; i < ids.length; i++) {
      if (request.signal?.aborted) return;
      if (turn.failAfterTokens !== undefined && i === turn.failAfterTokens) {
        throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `scripted failure after ${i} tokens`);
      }
      await sleep(turn.delayMsPerToken, request.signal);
      yield { tokenId: ids[i]!, logprob: this.logprob(ids[i]!) };
    }
  }
}
