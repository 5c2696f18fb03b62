import type { CanonicalMessage } from '../contracts/messages';
import { byteChatMl } from './engine/byte-chatml';
import { OPENCLAW_CONTEXT_MARKER } from './canonical';
import { TitoLedger } from './ledger';

const { tokenizer, chatTemplate } = byteChatMl();
const user = (text: string): CanonicalMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
const tools = [{ name: 'w', parameters: { type: 'object' } }];

/** Answer a prepared prompt with a scripted reply (raw ids as a model would write them). */
function answer(ledger: TitoLedger, messages: CanonicalMessage[], callIndex: number, parts: CanonicalMessage['parts']) {
  const prepared = ledger.prepare({ messages, tools });
  const outputIds = chatTemplate.renderReply(parts);
  prepared.commit({ callIndex, outputIds, finishReason: 'stop', reply: { role: 'assistant', parts } });
  return { prepared, outputIds };
}

describe('TITO ledger', () => {
  it('reuses prompt ids and raw output ids, rendering only the new suffix', () => {
    const ledger = new TitoLedger(chatTemplate);
    const call = { type: 'tool_call' as const, id: 'call_1', name: 'w', arguments: '{"a":1,"b":2}' };
    const first = answer(ledger, [user('go')], 0, [call]);
    // Raw output ids are reused even if they are not what the template would render.
    const weird = [...tokenizer.encode('  odd spacing '), tokenizer.special('<|im_end|>')];
    first.prepared.commit({ callIndex: 0, outputIds: weird, finishReason: 'stop', reply: { role: 'assistant', parts: [call] } });
    const echoed: CanonicalMessage = { role: 'assistant', parts: [{ type: 'tool_call', id: 'call1', name: 'w', arguments: '{"b":2,"a":1}' }] };
    const next = ledger.prepare({ messages: [user('go'), echoed, { role: 'tool', parts: [{ type: 'tool_result', callId: 'call-1', content: 'done' }] }], tools });
    expect(next.origin).toEqual({ kind: 'reuse', parentCall: 0, reusedTokens: first.prepared.promptIds.length + weird.length });
    expect(next.promptIds.slice(0, first.prepared.promptIds.length)).toEqual(first.prepared.promptIds);
    expect(Array.from(next.promptIds.slice(first.prepared.promptIds.length, first.prepared.promptIds.length + weird.length))).toEqual(weird);
    expect(tokenizer.decode(next.promptIds.slice(first.prepared.promptIds.length + weird.length)))
      .toBe('\n<|im_start|>user\n<tool_response>\ndone\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
  });

  it('treats a lone text block and a string alike, and ignores echoed thinking', () => {
    const ledger = new TitoLedger(chatTemplate);
    answer(ledger, [user('go')], 0, [{ type: 'thinking', text: 'hmm' }, { type: 'text', text: 'ok' }]);
    const split: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'o' }, { type: 'text', text: 'k' }] };
    expect(ledger.prepare({ messages: [user('go'), split, user('more')], tools }).origin.kind).toBe('reuse');
  });

  it('forks with a reason when history is rewritten, tools change or the reply is not echoed', () => {
    const ledger = new TitoLedger(chatTemplate);
    expect(ledger.prepare({ messages: [user('go')], tools }).origin).toEqual({ kind: 'fork', reason: 'first call of the session' });
    answer(ledger, [user('go')], 0, [{ type: 'text', text: 'ok' }]);
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    expect(ledger.prepare({ messages: [user('GO'), reply, user('x')], tools }).origin).toEqual({ kind: 'fork', reason: "message 0 differs from call 0's (history rewritten)" });
    expect(ledger.prepare({ messages: [user('go'), reply, user('x')], tools: [] }).origin).toEqual({ kind: 'fork', reason: 'tool list differs from call 0' });
    expect(ledger.prepare({ messages: [user('go'), { role: 'assistant', parts: [{ type: 'text', text: 'edited' }] }, user('x')], tools }).origin)
      .toEqual({ kind: 'fork', reason: "call 0's reply was not echoed as we returned it (message 1 differs)" });
  });

  it('keys tool lists by value: the same list in new objects reuses, a change deep in a schema forks', () => {
    const ledger = new TitoLedger(chatTemplate);
    const schema = (type: string) => [{ name: 'w', description: 'write', parameters: { type: 'object', properties: { path: { type } } } }];
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    const first = ledger.prepare({ messages: [user('go')], tools: schema('string') });
    first.commit({ callIndex: 0, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    // Every request parses its tools into new objects: equal values are the same list.
    expect(ledger.prepare({ messages: [user('go'), reply, user('x')], tools: schema('string') }).origin.kind).toBe('reuse');
    expect(ledger.prepare({ messages: [user('go'), reply, user('x')], tools: schema('number') }).origin).toEqual({ kind: 'fork', reason: 'tool list differs from call 0' });
    // The key of the first list is still found after another list was seen.
    expect(ledger.prepare({ messages: [user('go'), reply, user('y')], tools: schema('string') }).origin.kind).toBe('reuse');
    // The same values with keys in another order are the same tools too (the key sorts them).
    const reordered = [{ name: 'w', description: 'write', parameters: { properties: { path: { type: 'string' } }, type: 'object' } }];
    expect(ledger.prepare({ messages: [user('go'), reply, user('z')], tools: reordered }).origin.kind).toBe('reuse');
  });

  it('keeps a message sent again with the same values once, and one that differs in any value as it was sent', () => {
    const ledger = new TitoLedger(chatTemplate);
    const stored = () => (ledger as unknown as { entries: { messages: CanonicalMessage[]; reply: CanonicalMessage }[] }).entries;
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'thinking', text: 'hmm' }, { type: 'text', text: 'ok' }] };
    const p0 = ledger.prepare({ messages: [user('go')], tools });
    p0.commit({ callIndex: 0, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    // The harness sends the whole conversation again, parsed into new objects, its echo without the reasoning.
    const echo: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    const p1 = ledger.prepare({ messages: [user('go'), echo, user('next')], tools });
    expect(p1.origin.kind).toBe('reuse');
    p1.commit({ callIndex: 1, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    const [e0, e1] = stored();
    expect(e1!.messages[0]).toBe(e0!.messages[0]); // same values: the earlier object
    expect(e1!.messages[1]).toBe(echo); // the same message to the ledger, but not the same values: kept as sent
    expect(Object.isFrozen(e1!.messages[2]) && Object.isFrozen(e1!.messages[2]!.parts[0])).toBe(true);
    // The reply we returned, echoed with all its values, is the reply object itself.
    const p2 = ledger.prepare({ messages: [user('go'), echo, user('next'), { role: 'assistant', parts: [{ type: 'thinking', text: 'hmm' }, { type: 'text', text: 'ok' }] }, user('more')], tools });
    expect(p2.origin).toMatchObject({ kind: 'reuse', parentCall: 1 });
    p2.commit({ callIndex: 2, outputIds: [], finishReason: 'stop', reply });
    expect(stored()[2]!.messages[3]).toBe(reply);
    expect(stored()[2]!.messages[1]).toBe(echo);
  });

  it('extends the tip in place but branches safely: earlier prompts never change', () => {
    const ledger = new TitoLedger(chatTemplate);
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    const { prepared: root } = answer(ledger, [user('go')], 0, reply.parts);
    const rootCopy = Array.from(root.promptIds);
    const a = ledger.prepare({ messages: [user('go'), reply, user('branch a')], tools });
    const aCopy = Array.from(a.promptIds);
    a.commit({ callIndex: 1, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
    const b = ledger.prepare({ messages: [user('go'), reply, user('branch b')], tools });
    const aNext = ledger.prepare({ messages: [user('go'), reply, user('branch a'), reply, user('more')], tools });
    expect(a.promptIds.buffer).toBe(root.promptIds.buffer); // the tip was extended in place
    expect(b.promptIds.buffer).not.toBe(root.promptIds.buffer); // a second child branches off
    expect(Array.from(root.promptIds)).toEqual(rootCopy);
    expect(Array.from(a.promptIds)).toEqual(aCopy);
    expect(tokenizer.decode(b.promptIds)).toContain('branch b');
    expect(tokenizer.decode(b.promptIds)).not.toContain('branch a');
    expect(Array.from(aNext.promptIds.subarray(0, aCopy.length))).toEqual(aCopy);
    expect(tokenizer.decode(aNext.promptIds)).toMatch(/branch a[\s\S]*more/);
  });

  it('reuses the same prompt ids for a retry with an identical body', () => {
    const ledger = new TitoLedger(chatTemplate);
    const { prepared } = answer(ledger, [user('go')], 0, [{ type: 'text', text: 'ok' }]);
    const retry = ledger.prepare({ messages: [user('go')], tools });
    expect(retry.origin).toEqual({ kind: 'retry', of: 0 });
    expect(retry.promptIds).toEqual(prepared.promptIds);
  });

  it('sets OpenClaw\'s moving internal-context message aside', () => {
    const ledger = new TitoLedger(chatTemplate);
    const ctx = (n: number) => user(`${OPENCLAW_CONTEXT_MARKER}\nruntime ${n}`);
    answer(ledger, [user('go'), ctx(1)], 0, [{ type: 'text', text: 'ok' }]);
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    const same = ledger.prepare({ messages: [user('go'), reply, user('next'), ctx(1)], tools });
    expect(same.origin.kind).toBe('reuse');
    expect(tokenizer.decode(same.promptIds)).not.toMatch(/runtime 1[\s\S]*runtime 1/); // not re-appended
    const changed = ledger.prepare({ messages: [user('go'), reply, user('next'), ctx(2)], tools });
    expect(changed.origin.kind).toBe('reuse');
    expect(tokenizer.decode(changed.promptIds)).toMatch(/runtime 1[\s\S]*next[\s\S]*runtime 2/);
  });
});

describe('TITO ledger: failed calls and fork reasons', () => {
  it('a re-send of a call that failed is a retry of it (its prompt ids), even as the first call', () => {
    const ledger = new TitoLedger(chatTemplate);
    const failed = ledger.prepare({ messages: [user('go')], tools });
    failed.failed(0);
    const again = ledger.prepare({ messages: [user('go')], tools });
    expect(again.origin).toEqual({ kind: 'retry', of: 0 });
    expect(Array.from(again.promptIds)).toEqual(Array.from(failed.promptIds));
    expect(ledger.prepare({ messages: [user('other')], tools }).origin).toEqual({ kind: 'fork', reason: 'first call of the session' });
  });

  it('explains a fork by the calls that offered the same tools, not by a tool-less side call in between', () => {
    const ledger = new TitoLedger(chatTemplate);
    answer(ledger, [user('go')], 0, [{ type: 'text', text: 'working' }]);
    // A compaction-like side call: the same history, no tools.
    const side = ledger.prepare({ messages: [user('go'), { role: 'assistant', parts: [{ type: 'text', text: 'working' }] }, user('summarise')], tools: [] });
    side.commit({ callIndex: 1, outputIds: chatTemplate.renderReply([{ type: 'text', text: 'summary' }]), finishReason: 'stop', reply: { role: 'assistant', parts: [{ type: 'text', text: 'summary' }] } });
    expect(ledger.prepare({ messages: [user('go'), user('summary')], tools }).origin)
      .toEqual({ kind: 'fork', reason: "call 0's reply was not echoed as we returned it (message 1 differs)" });
  });
});
