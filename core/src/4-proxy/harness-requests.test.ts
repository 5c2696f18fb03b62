import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CanonicalMessage } from '../contracts/messages';
import { byteChatMl } from './engine/byte-chatml';
import { OPENCLAW_CONTEXT_MARKER, splitTrailingContext } from './canonical';
import { TitoLedger } from './ledger';
import { anthropicMessages } from './wire/anthropic';
import { openAiChat } from './wire/openai-chat';
import { openAiResponses } from './wire/openai-responses';
import type { WireAdapter } from './wire/types';
import { recordedRequest } from '../testing/request-capture';
import { testModel } from '@clawgym/model-hf/testing';

// Request bodies captured from the real CLIs (scripts/install-harnesses.sh, a stand-in server):
// two consecutive calls of a "create hello.txt" task each.
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'harness-requests', `${name}.json`), 'utf8')) as unknown;
const { chatTemplate } = byteChatMl();

const cases: { harness: string; adapter: WireAdapter; echoedId?: [string, string] }[] = [
  { harness: 'claude-code', adapter: anthropicMessages },
  // OpenClaw strips non-alphanumerics from the ids we returned: we sent call_probe_01.
  { harness: 'openclaw', adapter: openAiChat, echoedId: ['callprobe01', 'call_probe_01'] },
  { harness: 'codex', adapter: openAiResponses },
  { harness: 'qwen-code', adapter: openAiChat },
];

describe.each(cases)('real $harness requests', ({ harness, adapter, echoedId }) => {
  const call1 = adapter.parse(fixture(`${harness}-call1`));
  const call2 = adapter.parse(fixture(`${harness}-call2`));

  it('parse into canonical conversations with the tools the harness offered', () => {
    expect(call1.conversation.messages.length).toBeGreaterThan(0);
    expect(call1.conversation.tools.length).toBeGreaterThan(3);
    expect(call2.conversation.tools).toEqual(call1.conversation.tools);
    expect(call1.stream).toBe(true);
  });

  it('make call 2 a TITO extension of call 1 once normalised', () => {
    const ledger = new TitoLedger(chatTemplate);
    const first = ledger.prepare(call1.conversation);
    const n = splitTrailingContext(call1.conversation.messages).messages.length;
    // The reply we returned is the assistant message the harness echoed, with our original ids.
    const echoed = splitTrailingContext(call2.conversation.messages).messages[n]!;
    expect(echoed.role).toBe('assistant');
    const reply: CanonicalMessage = {
      role: 'assistant',
      parts: echoed.parts.map((p) => (p.type === 'tool_call' && echoedId && p.id === echoedId[0] ? { ...p, id: echoedId[1] } : p)),
    };
    first.commit({ callIndex: 0, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    const second = ledger.prepare(call2.conversation);
    expect(second.origin).toMatchObject({ kind: 'reuse', parentCall: 0 });
    expect(second.promptIds.slice(0, first.promptIds.length)).toEqual(first.promptIds);
  });
});

it('sees OpenClaw\'s internal-context message at the end of both calls', () => {
  for (const n of [1, 2]) {
    const { messages } = openAiChat.parse(fixture(`openclaw-call${n}`)).conversation;
    const last = messages.at(-1)!;
    expect(last.parts[0]).toMatchObject({ type: 'text', text: expect.stringContaining(OPENCLAW_CONTEXT_MARKER) });
  }
});

it('keeps Claude Code\'s mid-conversation system message in order', () => {
  const { messages } = anthropicMessages.parse(fixture('claude-code-call2')).conversation;
  expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'user']);
});

// The same check on requests recorded from the newest CLIs (on Node 24; see the fixtures' README.md).
const newest: { harness: string; first: string; second: string; adapter: WireAdapter }[] = [
  { harness: 'Claude Code 2.1.332', first: 'claude-code-2.1.332-main', second: 'claude-code-2.1.332-call2', adapter: anthropicMessages },
  { harness: 'OpenClaw 2026.9.6', first: 'openclaw-2026.9.6-call1', second: 'openclaw-2026.9.6-call2', adapter: openAiChat },
  { harness: 'Codex 0.171.0', first: 'codex-0.171.0-call1', second: 'codex-0.171.0-call2', adapter: openAiResponses },
  { harness: 'Qwen Code 0.24.4', first: 'qwen-code-0.24.4-call1', second: 'qwen-code-0.24.4-call2', adapter: openAiChat },
];

describe.each(newest)('real $harness requests', ({ first, second, adapter }) => {
  it('make call 2 a TITO extension of call 1 once normalised', () => {
    const call1 = adapter.parse(recordedRequest(first).body);
    const call2 = adapter.parse(recordedRequest(second).body);
    expect(call2.conversation.tools).toEqual(call1.conversation.tools);
    const ledger = new TitoLedger(chatTemplate);
    const prepared = ledger.prepare(call1.conversation);
    const n = splitTrailingContext(call1.conversation.messages).messages.length;
    // The harness echoes our reply (ids compared with non-alphanumerics removed, as OpenClaw strips them).
    const reply = splitTrailingContext(call2.conversation.messages).messages[n]!;
    expect(reply.role).toBe('assistant');
    prepared.commit({ callIndex: 0, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    expect(ledger.prepare(call2.conversation).origin).toMatchObject({ kind: 'reuse', parentCall: 0 });
  });
});

// The same calls with Qwen3's template: the continuation foreseen before call 2 arrives (its tool
// results' turn rendered with their texts opaque, JinjaChatTemplate.primeContinuation) must give
// call 2 the ids that rendering its turn gives, for what each real CLI sends after a tool call.
describe.each(newest)('real $harness requests, Qwen3 template, the tool turn foreseen', ({ first, second, adapter }) => {
  it('gives call 2 the ids a render of its new messages gives', () => {
    const { chatTemplate: qwen3 } = testModel('qwen3');
    const call1 = adapter.parse(recordedRequest(first).body);
    const call2 = adapter.parse(recordedRequest(second).body);
    const messages = splitTrailingContext(call1.conversation.messages).messages;
    const later = splitTrailingContext(call2.conversation.messages).messages;
    const reply = later[messages.length]!;
    const next = later.slice(messages.length + 1);
    const history = { messages, reply, tools: call2.conversation.tools, outputIds: qwen3.renderReply(reply.parts, call2.conversation.tools), finishReason: 'stop' as const };
    const rendered = qwen3.continueFrom!(history, next, { checkedAt: 1e9 });
    const memo: Record<string, unknown> = { checkedAt: 1e9 };
    qwen3.primeContinuation!(history, memo);
    const fill = jest.spyOn(qwen3 as unknown as { fillIn: (...a: unknown[]) => unknown }, 'fillIn');
    const foreseen = qwen3.continueFrom!(history, next, memo);
    // Every one of these CLIs answers a tool call with just its result: the foreseen turn is used.
    expect(fill).toHaveReturnedWith(expect.objectContaining({ ids: expect.anything() }));
    fill.mockRestore();
    expect(Array.from(foreseen.ids)).toEqual(Array.from(rendered.ids));
    expect(foreseen.drift).toEqual(rendered.drift);
  });
});
