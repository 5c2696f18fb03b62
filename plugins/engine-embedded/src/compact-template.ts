import { eventsToMessage, newToolCallId, type ByteTokenizer, type CanonicalConversation, type CanonicalMessage, type ChatTemplate, type FinishReason, type MessagePart, type OutputEvent, type OutputStreamParser, type TokenIds, type ToolSpec } from '@clawgym/core';

/** How much of what harnesses send the compact template keeps. */
export interface CompactOptions {
  /**
   * Characters of system text kept (head); 0 drops the harness's system prompt, and the
   * `<system-reminder>` blocks some harnesses (Claude Code) put into user turns.
   */
  systemChars: number;
  /** Characters of each tool result kept (head), with a marker when cut. */
  toolResultChars: number;
}

const SEP = '<|sep|>';

/** System text a harness puts into a user turn: Claude Code's context, date and file-read notes. */
const REMINDER = /(<system-reminder>[\s\S]*?<\/system-reminder>)\s*/g;

/** A user turn's text with its system reminders cut to `chars` each (dropped at 0). */
export function cutReminders(text: string, chars: number): string {
  return text.replace(REMINDER, (_, block: string) => (chars > 0 ? `${block.slice(0, chars)}${block.length > chars ? '…[cut]' : ''}\n` : ''));
}

/** Parameter names of a tool, required ones first, as the compact template lists them. */
export function toolParams(tool: ToolSpec): string[] {
  const props = Object.keys((tool.parameters as { properties?: Record<string, unknown> }).properties ?? {});
  const required = ((tool.parameters as { required?: string[] }).required ?? []).filter((r) => props.includes(r));
  return [...required, ...props.filter((p) => !required.includes(p))];
}

const isStringParam = (tool: ToolSpec | undefined, name: string) => {
  const p = ((tool?.parameters as { properties?: Record<string, { type?: unknown }> })?.properties ?? {})[name];
  return !p || p.type === undefined || p.type === 'string';
};

/**
 * A compact chat template for a small byte-level model. A tiny model should not read 30 kB of
 * JSON schemas to act, so tools are listed as `name(param, ...)`, the harness's system prompt
 * and the system reminders it puts into user turns are cut to `systemChars`, tool results to
 * `toolResultChars`, and a tool call is written
 * `<tool_call>name<|sep|>param<|sep|>value<|sep|>param<|sep|>value</tool_call>` — string values
 * raw, others as JSON. Parsing maps it back to the wire formats' JSON arguments exactly (values
 * typed by the request's tool schemas). Turns use the ChatML specials.
 */
export class CompactTemplate implements ChatTemplate {
  readonly name = 'compact';
  readonly stopIds: readonly number[];
  private readonly sp;

  constructor(private readonly tokenizer: ByteTokenizer, private readonly options: CompactOptions) {
    const s = (t: Parameters<ByteTokenizer['special']>[0]) => tokenizer.special(t);
    this.sp = { start: s('<|im_start|>'), end: s('<|im_end|>'), call: s('<tool_call>'), callEnd: s('</tool_call>'), res: s('<tool_response>'), resEnd: s('</tool_response>'), sep: s(SEP as '<|sep|>') };
    this.stopIds = [this.sp.end];
  }

  private enc(ids: number[], text: string) { for (const id of this.tokenizer.encode(text)) ids.push(id); }

  render(conversation: CanonicalConversation): TokenIds {
    const ids: number[] = [];
    const system = conversation.messages.filter((m, i) => m.role === 'system' && i === 0);
    const sysText = system.flatMap((m) => m.parts).map((p) => (p.type === 'text' ? p.text : '')).join('\n').slice(0, this.options.systemChars);
    const toolList = conversation.tools.map((t) => `${t.name}(${toolParams(t).join(', ')})`).join(' ');
    ids.push(this.sp.start);
    this.enc(ids, `system\n${sysText}${sysText && toolList ? '\n' : ''}${toolList ? `tools: ${toolList}` : ''}`);
    ids.push(this.sp.end);
    this.enc(ids, '\n');
    conversation.messages.forEach((m, i) => { if (!(i === 0 && m.role === 'system')) this.renderMessage(m, ids); });
    ids.push(this.sp.start);
    this.enc(ids, 'assistant\n');
    return Int32Array.from(ids);
  }

  renderContinuation(next: CanonicalMessage[], finishReason: FinishReason): TokenIds {
    const ids: number[] = finishReason === 'stop' || finishReason === 'tool_calls' ? [] : [this.sp.end];
    this.enc(ids, '\n');
    for (const m of next) this.renderMessage(m, ids);
    ids.push(this.sp.start);
    this.enc(ids, 'assistant\n');
    return Int32Array.from(ids);
  }

  renderReply(parts: readonly MessagePart[]): number[] {
    const ids: number[] = [];
    this.renderAssistant(parts, ids);
    ids.push(this.sp.end);
    return ids;
  }

  private renderAssistant(parts: readonly MessagePart[], ids: number[]) {
    for (const p of parts) if (p.type === 'text') this.enc(ids, p.text);
    for (const p of parts) {
      if (p.type !== 'tool_call') continue;
      ids.push(this.sp.call);
      this.enc(ids, p.name);
      let args: Record<string, unknown> = {};
      try { args = JSON.parse(p.arguments) as Record<string, unknown>; } catch { /* rendered without arguments */ }
      for (const [k, v] of Object.entries(args)) {
        ids.push(this.sp.sep); this.enc(ids, k);
        ids.push(this.sp.sep); this.enc(ids, typeof v === 'string' ? v : JSON.stringify(v));
      }
      ids.push(this.sp.callEnd);
    }
  }

  private renderMessage(m: CanonicalMessage, ids: number[]) {
    ids.push(this.sp.start);
    if (m.role === 'assistant') {
      this.enc(ids, 'assistant\n');
      this.renderAssistant(m.parts, ids);
    } else {
      this.enc(ids, `${m.role === 'system' ? 'system' : 'user'}\n`);
      for (const p of m.parts) {
        if (p.type === 'tool_result') {
          const content = cutReminders(p.content, this.options.systemChars);
          const cut = content.length > this.options.toolResultChars;
          ids.push(this.sp.res);
          this.enc(ids, cut ? `${content.slice(0, this.options.toolResultChars)}…[cut]` : content);
          ids.push(this.sp.resEnd);
        } else if (p.type === 'text') this.enc(ids, m.role === 'system' ? p.text.slice(0, this.options.systemChars) : cutReminders(p.text, this.options.systemChars));
      }
    }
    ids.push(this.sp.end);
    this.enc(ids, '\n');
  }

  parse(outputIds: readonly number[], tools?: readonly ToolSpec[]): CanonicalMessage {
    const parser = this.streamParser(tools);
    return eventsToMessage([...outputIds.flatMap((id) => parser.push(id)), ...parser.end()]);
  }

  streamParser(tools: readonly ToolSpec[] = []): OutputStreamParser {
    const { sp, tokenizer } = this;
    let inCall = false;
    let fields: number[][] = [];
    const utf8 = new TextDecoder('utf-8');
    const decode = (ids: number[]) => tokenizer.decode(ids);
    const finish = (closed: boolean): OutputEvent[] => {
      const all = fields;
      fields = [];
      const [nameIds = [], ...rest] = all;
      const name = decode(nameIds);
      const raw = () => `<tool_call>${all.map(decode).join(SEP)}${closed ? '</tool_call>' : ''}`;
      const tool = tools.find((t) => t.name === name);
      if (!closed || !name || rest.length % 2 !== 0 || (tools.length > 0 && !tool)) return [{ type: 'text', text: raw() }];
      const args: Record<string, unknown> = {};
      for (let i = 0; i < rest.length; i += 2) {
        const key = decode(rest[i]!);
        const text = decode(rest[i + 1]!);
        if (!key) return [{ type: 'text', text: raw() }];
        if (isStringParam(tool, key)) args[key] = text;
        else { try { args[key] = JSON.parse(text); } catch { args[key] = text; } }
      }
      return [{ type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), name, arguments: JSON.stringify(args) } }];
    };
    return {
      push(id) {
        if (id === sp.end) return [];
        if (inCall) {
          if (id === sp.callEnd) { inCall = false; return finish(true); }
          if (id === sp.sep) fields.push([]);
          else fields[fields.length - 1]!.push(id);
          return [];
        }
        if (id === sp.call) { inCall = true; fields = [[]]; return []; }
        const s = id < 256 ? utf8.decode(Uint8Array.of(id), { stream: true }) : tokenizer.decode([id]);
        return s ? [{ type: 'text', text: s }] : [];
      },
      end() {
        const tail = utf8.decode();
        const out: OutputEvent[] = tail ? [{ type: 'text', text: tail }] : [];
        if (inCall) { inCall = false; out.push(...finish(false)); }
        return out;
      },
    };
  }
}
