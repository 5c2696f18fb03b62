import { byteChatMl } from './engine/byte-chatml';
import type { ScriptContext, ScriptedTurn } from './engine/scripted';
import { titoStats } from '../5-records/tito-stats';
import { buildTree } from '../7-tree/builder';
import { recordedRequest, startScriptedProxy } from '../testing';
import { anthropicMessages } from './wire/anthropic';
import { openAiChat } from './wire/openai-chat';
import { openAiResponses } from './wire/openai-responses';

// Request features of the newest CLIs, each from a request recorded from the real CLI
// (core/src/4-proxy/__fixtures__/harness-requests, README.md there says which run made each).
const cc332 = recordedRequest('claude-code-2.1.332-main');
const ccTitle = recordedRequest('claude-code-2.1.197-title');
const ccMain197 = recordedRequest('claude-code-2.1.197-main');
const codex = recordedRequest('codex-0.171.0-call1');
const { tokenizer } = byteChatMl();

function script({ sessionId, callIndex }: ScriptContext): ScriptedTurn {
  if (sessionId.startsWith('title-ok')) return callIndex === 0 ? { text: '{"title":"Hello file creation"}' } : { text: 'done' };
  if (sessionId.startsWith('title-bad')) return { text: 'Hello file creation' };
  if (sessionId.startsWith('think')) return { thinking: 'plan: write the file first', text: 'ok' };
  if (sessionId.startsWith('ns')) return { toolCalls: [{ name: 'multi_agent_v1.spawn_agent', arguments: { message: 'look around' } }] };
  return { text: 'ok' };
}

type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
const notes: [string, string][] = [];
beforeAll(async () => { p = await startScriptedProxy(script, { onNote: (id, n) => notes.push([id, n]) }); });
afterAll(async () => { await p.close(); });

async function post(id: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const key = p.proxy.sessions.get(id)?.key ?? p.proxy.openSession(id).apiKey;
  const res = await fetch(`${p.url}/s/${id}${path}`, { method: 'POST', headers: { 'x-api-key': key, authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

describe('Claude Code deferred tools (defer_loading, tool search)', () => {
  it('a deferred tool is not rendered until a tool_reference loads it, and the note says so', () => {
    const body = cc332.body as { tools: { name: string; defer_loading?: boolean }[]; messages: unknown[] };
    expect(body.tools.find((t) => t.defer_loading)?.name).toBe('DeferredToolPlaceholder');
    const parsed = anthropicMessages.parse(body);
    expect(parsed.conversation.tools.map((t) => t.name)).toEqual(['Bash', 'Edit', 'Read', 'Write']);
    expect(parsed.notes).toContain('deferred tools not rendered until a tool_reference loads them: DeferredToolPlaceholder');
  });

  it('once a tool result carries a tool_reference to it, the deferred tool is offered like the others', () => {
    const body = cc332.body as { messages: unknown[] };
    const loaded = {
      ...body,
      messages: [...body.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: { query: 'placeholder' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'DeferredToolPlaceholder' }] }] }],
    };
    const parsed = anthropicMessages.parse(loaded);
    expect(parsed.conversation.tools.map((t) => t.name)).toContain('DeferredToolPlaceholder');
    expect(parsed.conversation.messages.at(-1)!.parts).toEqual([{ type: 'tool_result', callId: 'toolu_1', content: '[tool loaded: DeferredToolPlaceholder]', isError: false }]);
  });
});

describe('Claude Code thinking.display "omitted" and new betas', () => {
  it('serves the recorded 2.1.332 request with its betas (no HEAD preflight first); thinking comes back empty but is recorded', async () => {
    const betas = cc332.headers['anthropic-beta']!;
    expect(betas).toContain('mid-conversation-tool-changes-2026-07-01');
    expect((cc332.body as { thinking: unknown }).thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    const res = await post('think-1', '/v1/messages?beta=true', cc332.body, { 'anthropic-beta': betas, 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('"content_block":{"type":"thinking","thinking":""}');
    expect(res.text).not.toContain('thinking_delta');
    const text = [...res.text.matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string).join('');
    expect(text.trim()).toBe('ok');
    const [rec] = await p.store.read('think-1');
    expect(tokenizer.decode(rec!.outputIds)).toContain('plan: write the file first');
    expect(rec!.notes).toContain('thinking.display "omitted": thinking blocks are returned empty (the generated ids are recorded)');
  });
});

describe('structured-output side calls (output_config.format)', () => {
  it('tells the model the schema, checks the reply against it, and classifies the call as a title side call', async () => {
    const schema = (ccTitle.body as { output_config: { format: { schema: unknown } } }).output_config.format.schema;
    expect(schema).toEqual({ type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false });
    const res = await post('title-ok-1', '/v1/messages?beta=true', ccTitle.body);
    expect(res.status).toBe(200);
    const [rec] = await p.store.read('title-ok-1');
    expect(rec!.role).toBe('title');
    expect(tokenizer.decode(Array.from(rec!.promptIds))).toContain(`follows this JSON schema:\n${JSON.stringify(schema)}`);
    expect(rec!.notes).toContain('response schema: the reply follows it');
  });

  it('says when the reply misses the schema (sampling is not constrained)', async () => {
    await post('title-bad-1', '/v1/messages?beta=true', ccTitle.body);
    const [rec] = await p.store.read('title-bad-1');
    expect(rec!.notes).toContain('response schema: the reply is not JSON (sampling is not constrained)');
    expect(notes).toContainEqual(['title-bad-1', 'response schema: the reply is not JSON (sampling is not constrained)']);
  });

  it('the title call as call 0 does not fork the main tree: the main agent\'s first call roots it, the title is auxiliary', async () => {
    await post('title-ok-2', '/v1/messages?beta=true', ccTitle.body);
    await post('title-ok-2', '/v1/messages?beta=true', ccMain197.body);
    const records = await p.store.read('title-ok-2');
    expect(records.map((r) => r.role)).toEqual(['title', undefined]);
    const tree = buildTree(records, { rolloutId: 'title-ok-2', taskId: 't', category: 'c', harness: 'claude-code', outcome: 'ok', reward: 1 }, { messageEndId: tokenizer.special('<|im_end|>') });
    expect(tree.nodes[0]!.callIndex).toBe(1); // the main tree comes first and starts at the main call
    expect(tree.auxiliaryRoots).toHaveLength(1);
    expect(tree.nodes[tree.auxiliaryRoots[0]!]!.callIndex).toBe(0);
    const tito = titoStats(records);
    expect(tito.side).toBe(1);
    expect(tito.forkReasons).toEqual([]);
  });
});

describe('Codex namespace and web_search tools', () => {
  it('renders multi_agent_v1\'s tools as multi_agent_v1.<tool> and refuses web_search with a note', () => {
    const parsed = openAiResponses.parse(codex.body);
    const names = parsed.conversation.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['exec_command', 'multi_agent_v1.spawn_agent', 'multi_agent_v1.wait_agent', 'multi_agent_v1.close_agent']));
    expect(names).not.toContain('web_search');
    expect(parsed.notes).toEqual(expect.arrayContaining([
      expect.stringMatching(/^namespace multi_agent_v1 rendered as \d+ tools named multi_agent_v1\.<tool>$/),
      'hosted tools refused (the proxy cannot run OpenAI\'s server-side tools): web_search (web_search)',
    ]));
  });

  it('a call to a namespaced tool goes back as {name, namespace}, and Codex\'s echo of it extends the history (TITO reuse)', async () => {
    const res = await post('ns-1', '/v1/responses', codex.body);
    const done = res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; item?: Record<string, unknown> })
      .find((e) => e.type === 'response.output_item.done' && e.item?.type === 'function_call')!;
    expect(done.item).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"look around"}' });
    const body = codex.body as { input: unknown[] };
    const echoed = { ...body, input: [...body.input, { type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: done.item!.arguments, call_id: done.item!.call_id }, { type: 'function_call_output', call_id: done.item!.call_id, output: '{"agent_id":"a1"}' }] };
    await post('ns-1', '/v1/responses', echoed);
    const records = await p.store.read('ns-1');
    expect(records[1]!.origin).toMatchObject({ kind: 'reuse', parentCall: 0 });
  });
});

describe('the same features on the OpenAI formats', () => {
  it('Chat Completions: response_format json_schema is the response schema; a tool that is not a function is refused with a note', () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const parsed = openAiChat.parse({
      model: 'm', messages: [{ role: 'user', content: 'go' }],
      response_format: { type: 'json_schema', json_schema: { name: 'check', schema } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }, { type: 'web_search_preview' }],
    });
    expect(parsed.responseSchema).toEqual(schema);
    expect(parsed.conversation.tools.map((t) => t.name)).toEqual(['f']);
    expect(parsed.notes).toEqual(['tools that are not functions refused (the proxy cannot run them): web_search_preview']);
  });

  it('Responses: text.format json_schema is the response schema', () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } } };
    expect(openAiResponses.parse({ model: 'm', input: 'go', text: { format: { type: 'json_schema', name: 't', schema } } }).responseSchema).toEqual(schema);
  });
});
