import type { ChatTemplate, FinishReason, OutputStreamParser, TokenIds } from '../contracts/engine';
import type { CanonicalConversation, CanonicalMessage, MessagePart, ToolSpec } from '../contracts/messages';
import { ClawGymError, ErrorCodes } from '../errors';
import { eventsToMessage } from '../engine/output';
import { detectFamily, type Family } from './families';
import { idStreamParser } from './parsers/types';
import { TemplateContinuation } from './template-continuation';
import { toTemplateMessages, type TemplateMessage } from './template-messages';
import { templateToolsOf, type JinjaTemplateOptions, type Rendered } from './template-rendering';

export type { ContinuationMemo } from './template-continuation';
export type { JinjaTemplateOptions, RawRender, Rendered } from './template-rendering';

/**
 * A model's own Jinja chat template over its own tokenizer. Renders exactly what Python's
 * `apply_chat_template` writes (see jinja-env.ts), encodes markup to control ids and message
 * text never to them, continues a conversation by rendering only a small context around the new
 * messages, and says how a reused prompt drifts from the template's render of the whole.
 */
export class JinjaChatTemplate extends TemplateContinuation implements ChatTemplate {
  readonly name: string;
  readonly family: Family;
  private readonly skipIds: Set<number>;

  constructor(o: JinjaTemplateOptions) {
    super(o);
    this.family = o.family ?? detectFamily(o.source, o.tokenizer.control);
    this.name = `jinja:${this.family.name}`;
    this.skipIds = new Set(this.stopIds);
  }

  /** The prompt of a whole conversation, text and ids (what `clawgym template` prints). */
  renderPrompt(conversation: CanonicalConversation, addGenerationPrompt = true): Rendered {
    return this.renderMessages(toTemplateMessages(conversation.messages), templateToolsOf(conversation.tools), addGenerationPrompt);
  }

  /** Render template messages and tools as given (already in the template's shape). */
  renderMessages(messages: readonly unknown[], tools: readonly unknown[] | undefined, addGenerationPrompt: boolean): Rendered {
    const { raw, neutral } = this.renderTemplate(messages, tools, addGenerationPrompt);
    return { text: neutral.restore(raw), ids: this.encodeRaw(raw, neutral) };
  }

  render(conversation: CanonicalConversation): TokenIds {
    return this.renderPrompt(conversation).ids;
  }

  renderContinuation(next: CanonicalMessage[], finishReason: FinishReason): TokenIds {
    // Without history, the continuation is rendered after an empty context with an empty reply.
    return this.continueFrom({ messages: [], reply: { role: 'assistant', parts: [] }, tools: [], outputIds: [], finishReason }, next).ids;
  }

  /** Ids the model would generate for this reply: the template's render of it, through the stop id. */
  renderReply(parts: readonly MessagePart[], tools: readonly ToolSpec[] = []): number[] {
    const user: TemplateMessage = { role: 'user', content: 'x' };
    const open = this.renderRaw([user], tools, true);
    const reply = toTemplateMessages([{ role: 'assistant', parts: [...parts] }]);
    const full = this.renderRaw([user, ...reply], tools, false);
    const start = open.raw.length;
    const stop = this.stopAfter(full.raw, start);
    if (!full.raw.startsWith(open.raw) || !stop) throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, 'the chat template does not render an assistant reply after its generation prompt');
    return Array.from(this.encodeRaw(full.raw.slice(start, stop.end), full.neutral));
  }

  /** The generation prompt's tail decides whether output starts inside a reasoning block. */
  private startsInReasoning(): boolean {
    try {
      const g = this.renderRaw([{ role: 'user', content: 'x' }], [], true).raw;
      return /<think>\s*$/.test(g);
    } catch { return false; }
  }

  private reasoningStart?: boolean;

  streamParser(tools?: readonly ToolSpec[]): OutputStreamParser {
    this.reasoningStart ??= this.startsInReasoning();
    return idStreamParser(this.o.tokenizer.streamDecoder(), this.family.parser({ tools, startInReasoning: this.reasoningStart }), this.skipIds);
  }

  parse(outputIds: readonly number[], tools?: readonly ToolSpec[]): CanonicalMessage {
    const p = this.streamParser(tools);
    return eventsToMessage([...outputIds.flatMap((id) => p.push(id)), ...p.end()]);
  }
}
