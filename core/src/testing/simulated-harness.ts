import type { CanonicalMessage } from '../contracts/messages';
import type { ModelCallRecord } from '../contracts/records';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { TitoLedger } from '../4-proxy/ledger';
import { Rng } from '../util/rng';

/** What a simulated harness does next. */
export type HarnessOp = 'step' | 'retry' | 'fail' | 'rewrite' | 'subagent' | 'compaction';

/**
 * Simulate a harness talking to the proxy's real TITO ledger and ChatML template, producing the
 * call records the proxy would: steady steps, retries with identical bodies, failed calls,
 * history rewrites (forks), subagents and compaction (side conversations with their own
 * system prompt, marked `role: 'side'`). For tree-builder property tests and benchmarks.
 */
export function simulateRollout(ops: readonly HarnessOp[], seed: number, rolloutId = 'sim'): ModelCallRecord[] {
  const { tokenizer, chatTemplate } = byteChatMl();
  const ledger = new TitoLedger(chatTemplate);
  const rng = new Rng(seed);
  const records: ModelCallRecord[] = [];
  const tools = [{ name: 'bash', parameters: { type: 'object' } }];
  const user = (text: string): CanonicalMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
  let main: CanonicalMessage[] = [{ role: 'system', parts: [{ type: 'text', text: 'You are the main agent.' }] }, user(`task ${seed}`)];
  const word = () => Array.from({ length: rng.int(1, 6) }, () => String.fromCharCode(97 + rng.int(0, 25))).join('');

  const call = (messages: CanonicalMessage[], role: 'main' | 'side', fail = false) => {
    const prepared = ledger.prepare({ messages, tools });
    const callIndex = records.length;
    const useTool = rng.next() < 0.6;
    const parts: CanonicalMessage['parts'] = [{ type: 'text', text: word() }];
    if (useTool) parts.push({ type: 'tool_call', id: `call_${callIndex}`, name: 'bash', arguments: JSON.stringify({ cmd: word() }) });
    const outputIds = chatTemplate.renderReply(parts);
    const reply: CanonicalMessage = { role: 'assistant', parts };
    const cut = fail ? outputIds.slice(0, rng.int(0, 3)) : outputIds;
    records.push({
      runId: 'sim', rolloutId, callIndex, wireFormat: 'openai-chat', requestedModel: 'm',
      promptIds: prepared.promptIds, outputIds: cut, outputLogprobs: cut.map(() => -rng.next()),
      finishReason: fail ? 'error' : useTool ? 'tool_calls' : 'stop', origin: prepared.origin, policyVersion: 0,
      timings: { receivedAt: 0, finishedAt: 0 }, role,
    });
    if (!fail) prepared.commit({ callIndex, outputIds, finishReason: 'stop', reply });
    return { reply, useTool, callIndex };
  };
  const step = (messages: CanonicalMessage[], role: 'main' | 'side') => {
    const { reply, useTool, callIndex } = call(messages, role);
    messages.push(reply, useTool ? { role: 'tool', parts: [{ type: 'tool_result', callId: `call_${callIndex}`, content: word() }] } : user(word()));
  };

  for (const op of ops) {
    switch (op) {
      case 'step': step(main, 'main'); break;
      case 'retry': {
        // An identical body sent again; the harness goes on with the second answer.
        call(main, 'main');
        step(main, 'main');
        break;
      }
      case 'fail': call(main, 'main', true); break;
      case 'rewrite': {
        if (main.length > 3) {
          const i = rng.int(2, main.length - 1);
          main = [...main.slice(0, i), user(`[rewritten] ${word()}`)];
        }
        step(main, 'main');
        break;
      }
      case 'subagent': {
        const sub: CanonicalMessage[] = [{ role: 'system', parts: [{ type: 'text', text: 'You are a subagent.' }] }, user(word())];
        step(sub, 'side');
        step(sub, 'side');
        break;
      }
      case 'compaction': {
        const summary: CanonicalMessage[] = [{ role: 'system', parts: [{ type: 'text', text: 'Summarise the conversation.' }] }, user(tokenizer.decode(records.at(-1)?.outputIds ?? []))];
        step(summary, 'side');
        main = [main[0]!, user(`summary: ${word()}`)];
        step(main, 'main');
        break;
      }
    }
  }
  return records;
}
