import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf } from '../../errors';
import { modelSupport } from '../../kernel/installed';
import { anthropicMessages } from '../../4-proxy/wire/anthropic';
import { geminiGenerateContent } from '../../4-proxy/wire/gemini';
import { openAiChat } from '../../4-proxy/wire/openai-chat';
import { openAiResponses } from '../../4-proxy/wire/openai-responses';
import type { WireAdapter } from '../../4-proxy/wire/types';
import { withArticle } from '../../util/article';

/** Options of `clawgym template`. */
export interface TemplateCliOptions {
  model: string;
  /** A file of generated ids (a JSON array, or `{"ids": [...]}`) to parse into the harness's message. */
  parse?: string;
  format?: 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';
  /** Template variables as JSON, e.g. '{"enable_thinking": false}'. */
  kwargs?: string;
}

const ADAPTERS: Record<NonNullable<TemplateCliOptions['format']>, WireAdapter> = { 'openai-chat': openAiChat, anthropic: anthropicMessages, 'openai-responses': openAiResponses, gemini: geminiGenerateContent };

/** What a body of each format holds, for the message when one is refused. */
const SHAPES: Record<NonNullable<TemplateCliOptions['format']>, string> = {
  'openai-chat': 'OpenAI Chat: model, messages, tools',
  anthropic: 'Anthropic Messages: model, system, messages, tools',
  'openai-responses': 'OpenAI Responses: model, instructions, input, tools',
  gemini: "Gemini generateContent: contents, systemInstruction, tools (the model is in the request's path, not the body)",
};

function readJson(path: string, cwd: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(resolve(cwd, path), 'utf8'));
  } catch (err) {
    throw new ClawGymError(ErrorCodes.USAGE, `cannot read ${what} ${path}: ${messageOf(err)}`);
  }
}

/**
 * A request body as the wire parsers take it: a bare list of messages becomes `{messages}` (for
 * Gemini `{contents}`), and a body without `model` gets one (the model is the folder given;
 * checking a template needs only the messages and tools). A Gemini body names no model: its
 * path does.
 */
function withModel(body: unknown, format: NonNullable<TemplateCliOptions['format']>): unknown {
  if (format === 'gemini') return Array.isArray(body) ? { contents: body } : body;
  if (Array.isArray(body)) return { model: 'template', messages: body };
  if (body && typeof body === 'object' && !('model' in body)) return { model: 'template', ...body };
  return body;
}

/**
 * `clawgym template --model <folder> <request.json>`: the prompt exactly as the proxy sends it
 * for a first call (`{"text", "ids"}`); the request may be a harness's body, the body without
 * `model`, or the messages alone (a JSON array); with `--parse <ids.json>`, the message the harness would
 * receive for those generated ids (the request then only supplies the tools). How a user checks a
 * new model folder before a run.
 */
export async function templateCommand(request: string | undefined, opts: TemplateCliOptions, io: { out: (s: string) => void; cwd: string }): Promise<void> {
  let kwargs: Record<string, unknown> | undefined;
  if (opts.kwargs) {
    try { kwargs = JSON.parse(opts.kwargs) as Record<string, unknown>; } catch (err) { throw new ClawGymError(ErrorCodes.USAGE, `--kwargs is not JSON: ${messageOf(err)}`); }
  }
  const model = modelSupport(io.cwd, 'clawgym template').loadChatModel(opts.model, { rootDir: io.cwd, templateKwargs: kwargs });
  const format = opts.format ?? 'openai-chat';
  const adapter = ADAPTERS[format];
  const body = withModel(request ? readJson(request, io.cwd, 'request') : [], format);
  let parsed: ReturnType<WireAdapter['parse']>;
  try {
    parsed = adapter.parse(body);
  } catch (err) {
    // The proxy would answer this body with a 400: say so, rather than as an unexpected error.
    throw new ClawGymError(ErrorCodes.USAGE, `${request ?? 'the request'} is not ${withArticle(adapter.format)} request the proxy accepts: ${messageOf(err)}`, {
      hint: `pass the body a harness would send (${SHAPES[format]}; --format for the other wire formats: ${Object.keys(ADAPTERS).join(', ')})`,
    });
  }
  const { conversation } = parsed;
  const name = parsed.model || 'template';
  if (opts.parse) {
    const raw = readJson(opts.parse, io.cwd, 'ids');
    const ids = Array.isArray(raw) ? raw : (raw as { ids?: unknown }).ids;
    if (!Array.isArray(ids) || !ids.every(Number.isInteger)) throw new ClawGymError(ErrorCodes.USAGE, `${opts.parse} must hold a JSON array of token ids (or {"ids": [...]})`);
    const stopped = ids.length > 0 && model.chatTemplate.stopIds.includes(ids[ids.length - 1] as number);
    const message = model.chatTemplate.parse(ids as number[], conversation.tools);
    const finishReason = message.parts.some((p) => p.type === 'tool_call') ? 'tool_calls' : stopped ? 'stop' : 'length';
    const reply = adapter.json({ message, finishReason, promptTokens: 0, outputTokens: ids.length }, { id: 'template', model: name, created: 0, promptTokens: 0 });
    io.out(`${JSON.stringify(reply, null, 2)}\n`);
    return;
  }
  const { text, ids } = model.chatTemplate.renderPrompt(conversation);
  io.out(`${JSON.stringify({ text, ids: Array.from(ids) })}\n`);
}
