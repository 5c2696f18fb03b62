import type { CanonicalMessage, MessagePart, ToolSpec } from '../../contracts/messages';
import { settle } from '../../util/settled';
import { Derived, historyOf, isObject, need, optNumber, type ErrorKind, type FinalReply, type ResponseMeta, type WireAdapter } from './types';

/**
 * Google's `generateContent` / `streamGenerateContent?alt=sse` (`/v1beta/models/<model>:<method>`),
 * as Gemini CLI speaks it through `@google/genai`. The model and whether to stream are in the
 * path, not the body: the server puts them in the parsed request (see {@link geminiRoute}).
 * Shapes: the `@google/genai` types the CLI bundles (Content, Part, FunctionCall,
 * FunctionResponse, GenerateContentResponse), and the requests Gemini CLI 0.61.0 sent.
 */

const STATUS_NAMES: Record<ErrorKind, [number, string]> = {
  invalid_request: [400, 'INVALID_ARGUMENT'], authentication: [401, 'UNAUTHENTICATED'], not_found: [404, 'NOT_FOUND'],
  gone: [404, 'NOT_FOUND'], too_large: [400, 'INVALID_ARGUMENT'], engine: [500, 'INTERNAL'], overloaded: [503, 'UNAVAILABLE'],
};

const FINISH = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', error: 'OTHER', aborted: 'OTHER' } as const;

/** `/v1beta/models/<model>:<method>` (also `/v1/`), or undefined. */
export function geminiRoute(path: string): { model: string; method: 'generateContent' | 'streamGenerateContent' | 'countTokens' } | undefined {
  const m = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  return m ? { model: decodeURIComponent(m[1]!), method: m[2] as 'generateContent' } : undefined;
}

/**
 * A function response's text for the template: its `output` when that is all it holds (what
 * Gemini CLI sends for a tool's result), else the response object as JSON.
 */
function responseText(response: unknown): string {
  if (isObject(response) && Object.keys(response).length === 1 && typeof response.output === 'string') return response.output;
  return JSON.stringify(response ?? {});
}

/** One `Content` in canonical form: one message, or a tool message and a user message when a user turn holds function responses and text. */
function geminiContent(c: unknown, i: number): CanonicalMessage[] {
  need(isObject(c), null, `contents[${i}] must be an object`);
  const content = c as Record<string, unknown>;
  const role = content.role ?? 'user';
  need(role === 'user' || role === 'model', null, `contents[${i}].role must be "user" or "model", got ${JSON.stringify(role)}`);
  need(Array.isArray(content.parts), null, `contents[${i}].parts must be an array`);
  const texts: string[] = [];
  const parts: MessagePart[] = [];
  const results: MessagePart[] = [];
  for (const [j, p] of (content.parts as unknown[]).entries()) {
    need(isObject(p), null, `contents[${i}].parts[${j}] must be an object`);
    const part = p as Record<string, unknown>;
    if (isObject(part.functionCall)) {
      const fc = part.functionCall;
      need(typeof fc.name === 'string', null, `contents[${i}].parts[${j}].functionCall.name must be a string`);
      parts.push({ type: 'tool_call', id: String(fc.id ?? fc.name), name: fc.name as string, arguments: JSON.stringify(fc.args ?? {}) });
    } else if (isObject(part.functionResponse)) {
      const fr = part.functionResponse;
      results.push({ type: 'tool_result', callId: String(fr.id ?? fr.name ?? ''), content: responseText(fr.response) });
    } else if (typeof part.text === 'string') {
      if (part.thought === true) parts.push({ type: 'thinking', text: part.text });
      else if (role === 'model') parts.push({ type: 'text', text: part.text });
      else texts.push(part.text);
    } else if (isObject(part.inlineData) || isObject(part.fileData)) {
      texts.push('[image]');
    }
  }
  if (role === 'model') return [{ role: 'assistant', parts }];
  const out: CanonicalMessage[] = [];
  if (results.length) out.push({ role: 'tool', parts: results });
  // A user turn's text parts are one message, joined by a newline (as Chat's parts are).
  if (texts.length || !results.length) out.push({ role: 'user', parts: [{ type: 'text', text: texts.join('\n') }] });
  return out;
}

/** The function declarations offered, and the names of the Google-hosted tools, which cannot be offered. */
function parseTools(raw: unknown): { tools: ToolSpec[]; refused: string[] } {
  if (raw === undefined) return { tools: [], refused: [] };
  need(Array.isArray(raw), null, "'tools' must be an array");
  const tools: ToolSpec[] = [];
  const refused: string[] = [];
  for (const t of raw as unknown[]) {
    if (!isObject(t)) continue;
    for (const key of Object.keys(t)) if (key !== 'functionDeclarations') refused.push(key);
    for (const [k, f] of (Array.isArray(t.functionDeclarations) ? t.functionDeclarations : []).entries()) {
      need(isObject(f) && typeof f.name === 'string', null, `tools[].functionDeclarations[${k}].name must be a string`);
      const d = f as Record<string, unknown>;
      const schema = isObject(d.parametersJsonSchema) ? d.parametersJsonSchema : isObject(d.parameters) ? d.parameters : undefined;
      tools.push({ name: d.name as string, description: typeof d.description === 'string' ? d.description : undefined, parameters: schema ?? {}, ...(schema ? {} : { parametersAbsent: true as const }) });
    }
  }
  return { tools, refused };
}

const contentsOf = new Derived<CanonicalMessage[]>();
const toolsOf = new Derived<{ tools: ToolSpec[]; refused: string[] }>();

/** The reply's parts in Gemini's shape (thoughts as `thought: true` text, calls whole). */
function replyParts(final: FinalReply): Record<string, unknown>[] {
  return final.message.parts.flatMap((p): Record<string, unknown>[] => {
    if (p.type === 'text') return p.text ? [{ text: p.text }] : [];
    if (p.type === 'thinking') return [{ text: p.text, thought: true }];
    if (p.type === 'tool_call') return [{ functionCall: { id: p.id, name: p.name, args: JSON.parse(p.arguments) as unknown } }];
    return [];
  });
}

const usage = (promptTokens: number, outputTokens: number) => ({ promptTokenCount: promptTokens, candidatesTokenCount: outputTokens, totalTokenCount: promptTokens + outputTokens });

/** Google's Gemini API (`generateContent`), as Gemini CLI speaks it. */
export const geminiGenerateContent: WireAdapter = {
  format: 'gemini-generate-content',
  historyKey: 'contents',

  parse(body, memo) {
    need(isObject(body), null, 'request body must be a JSON object');
    const b = body as Record<string, unknown>;
    need(Array.isArray(b.contents) && (b.contents as unknown[]).length > 0, null, "'contents' is required: a non-empty array of Content");
    const messages = historyOf(memo, 'gemini.contents', b.contents as unknown[], (c, i) => contentsOf.of(c, () => geminiContent(c, i))).flat();
    const system: CanonicalMessage[] = [];
    if (b.systemInstruction !== undefined) {
      const si = b.systemInstruction;
      const text = typeof si === 'string' ? si : isObject(si) && Array.isArray(si.parts) ? (si.parts as unknown[]).map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('\n') : need(false, '', "'systemInstruction' must be a Content");
      system.push({ role: 'system', parts: [{ type: 'text', text }] });
    }
    const { tools, refused } = toolsOf.of(b.tools, () => settle(parseTools(b.tools)));
    const g = isObject(b.generationConfig) ? b.generationConfig : {};
    need((g.candidateCount ?? 1) === 1, null, 'generationConfig.candidateCount must be 1 (one candidate per call)');
    const json = g.responseMimeType === 'application/json';
    const schema = json && isObject(g.responseJsonSchema) ? g.responseJsonSchema : json && isObject(g.responseSchema) ? g.responseSchema : undefined;
    return {
      ...(schema ? { responseSchema: schema } : {}),
      ...(refused.length ? { notes: [`Google-hosted tools refused (the proxy cannot run them): ${refused.join(', ')}`] } : {}),
      conversation: { messages: [...system, ...messages], tools },
      // The path names the model and the method; the server sets both (geminiRoute).
      model: '',
      stream: false,
      maxTokens: optNumber(g.maxOutputTokens, 'generationConfig.maxOutputTokens'),
      temperature: optNumber(g.temperature, 'generationConfig.temperature'),
      topP: optNumber(g.topP, 'generationConfig.topP'),
    };
  },

  // `alt=sse`: `data:` lines of GenerateContentResponse, no event names, no end marker. Each
  // output event goes out as the next one arrives, so that the last carries the finish reason and
  // the usage, as Gemini's last chunk does (a chunk of only an empty text part is what Gemini CLI
  // counts as an invalid response). A function call goes out whole: Gemini does not stream arguments.
  stream(sink, meta) {
    const chunk = (part: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...extra }], modelVersion: meta.model, responseId: meta.id,
    });
    let held: Record<string, unknown> | undefined;
    return {
      begin() { /* the first chunk carries the first output */ },
      event(e) {
        if (held) sink.send(undefined, chunk(held));
        held = e.type === 'text' ? { text: e.text } : e.type === 'thinking' ? { text: e.text, thought: true }
          : { functionCall: { id: e.call.id, name: e.call.name, args: JSON.parse(e.call.arguments) as unknown } };
      },
      end(final) {
        sink.send(undefined, { ...chunk(held ?? { text: '' }, { finishReason: FINISH[final.finishReason] }), usageMetadata: usage(final.promptTokens, final.outputTokens) });
      },
      fail(message) {
        if (held) sink.send(undefined, chunk(held));
        sink.send(undefined, geminiGenerateContent.errorBody('engine', message));
      },
    };
  },

  json(final, meta: ResponseMeta) {
    return {
      candidates: [{ content: { role: 'model', parts: replyParts(final) }, finishReason: FINISH[final.finishReason], index: 0 }],
      usageMetadata: usage(final.promptTokens, final.outputTokens), modelVersion: meta.model, responseId: meta.id,
    };
  },

  errorBody(kind, message) {
    const [code, status] = STATUS_NAMES[kind];
    return { error: { code, message, status } };
  },
};
