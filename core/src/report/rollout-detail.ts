import { join } from 'node:path';
import type { ChatTemplate, Tokenizer } from '../contracts/engine';
import type { MessagePart } from '../contracts/messages';
import { headOf, type CallSummary, type ModelCallRecord } from '../contracts/records';
import { CallStore } from '../5-records/call-store';
import { buildTreeFromStream } from '../7-tree/build-stream';
import { promptMessages, type PromptMessage } from './prompt-messages';
import type { RolloutEntry } from './rollout-log';

/** Longest text of one message or node the viewer carries; the rest is counted, not shown. */
const MAX_TEXT = 16_000;

const clip = (s: string, max = MAX_TEXT) => (s.length > max ? `${s.slice(0, max)}\n… ${s.length - max} more characters` : s);

/** One model call as the viewer shows it. */
export interface CallView {
  index: number;
  role: string;
  wire: string;
  finish: string;
  promptTokens: number;
  /** Prompt tokens this call added (the rest was reused from its parent or retried verbatim). */
  newTokens: number;
  outputTokens: number;
  origin: { kind: 'reuse' | 'retry' | 'fork'; text: string };
  drift?: { class: string; reason: string };
  policyVersion: number;
  /** Milliseconds to the first token and in all. */
  ttftMs?: number;
  totalMs: number;
  notes?: string[];
  /** The messages the call added to the conversation, read back from its new prompt ids. */
  messages: PromptMessage[];
  reply: { type: MessagePart['type']; text: string }[];
}

/** A rollout opened in the viewer: its log entry, every call, and each tree node's text. */
export interface RolloutDetail {
  entry: RolloutEntry;
  calls: CallView[];
  /** Text of each tree node (by id), when the tree rebuilt from the records matches the logged one. */
  nodeText?: string[];
  /** Why the calls could not be read, when they could not. */
  error?: string;
}

const originText = (r: ModelCallRecord) =>
  r.origin.kind === 'reuse' ? `reuses call ${r.origin.parentCall} (${r.origin.reusedTokens} tokens)`
    : r.origin.kind === 'retry' ? `retry of call ${r.origin.of}` : `fork: ${r.origin.reason}`;

function replyParts(r: ModelCallRecord, template: ChatTemplate, tokenizer: Tokenizer): CallView['reply'] {
  try {
    return template.parse(r.outputIds).parts.map((p) => ({
      type: p.type,
      text: clip(p.type === 'tool_call' ? `${p.name}(${p.arguments})` : p.type === 'tool_result' ? p.content : p.text),
    }));
  } catch {
    return [{ type: 'text', text: clip(tokenizer.decode(r.outputIds)) }];
  }
}

function callView(r: ModelCallRecord, template: ChatTemplate, tokenizer: Tokenizer): CallView {
  const reused = r.origin.kind === 'reuse' ? r.origin.reusedTokens : r.origin.kind === 'retry' ? r.promptIds.length : 0;
  const added = r.promptIds.subarray(reused);
  return {
    index: r.callIndex, role: r.role ?? 'main', wire: r.wireFormat, finish: r.finishReason,
    promptTokens: r.promptIds.length, newTokens: added.length, outputTokens: r.outputIds.length,
    origin: { kind: r.origin.kind, text: originText(r) },
    ...(r.drift ? { drift: r.drift } : {}),
    policyVersion: r.policyVersion,
    ...(r.timings.firstTokenAt ? { ttftMs: r.timings.firstTokenAt - r.timings.receivedAt } : {}),
    totalMs: r.timings.finishedAt - r.timings.receivedAt,
    ...(r.notes?.length ? { notes: r.notes } : {}),
    messages: promptMessages(tokenizer.decode(added)).map((m) => ({ ...m, text: clip(m.text) })),
    reply: replyParts(r, template, tokenizer),
  };
}

/**
 * Node texts from the tree rebuilt from the records, streamed again from the store: only where it
 * has the logged tree's shape.
 */
async function nodeTexts(store: CallStore, calls: readonly CallSummary[], entry: RolloutEntry, template: ChatTemplate, tokenizer: Tokenizer): Promise<string[] | undefined> {
  const logged = entry.tree?.nodes;
  if (!logged?.length) return undefined;
  const info = { rolloutId: entry.sessionId, taskId: entry.taskId, category: entry.category, harness: entry.harness, outcome: entry.outcome, reward: entry.reward ?? 0 };
  const tree = await buildTreeFromStream(calls, store.stream(entry.sessionId), info, { messageEndId: template.stopIds[0]! });
  const same = tree.nodes.length === logged.length && tree.nodes.every((n, i) => n.tokens.length === logged[i]!.tokens && n.parent === logged[i]!.parent);
  return same ? tree.nodes.map((n) => clip(tokenizer.decode(n.tokens), 4000)) : undefined;
}

/**
 * Open one rollout: its calls from the run's call store (through the store's own reader, so a
 * change of the record format reaches the viewer with no change here), read with the run's
 * tokenizer, a record at a time: what the page gets (each call's new messages and reply, clipped)
 * is kept, the records are not, so a session of any size opens. A rollout whose records cannot be
 * read opens with the error in place of its calls.
 */
export async function rolloutDetail(runDir: string, entry: RolloutEntry, model: { tokenizer: Tokenizer; chatTemplate: ChatTemplate }): Promise<RolloutDetail> {
  const store = new CallStore(join(runDir, 'calls'));
  const calls: CallView[] = [];
  const heads: CallSummary[] = [];
  try {
    for await (const r of store.stream(entry.sessionId)) {
      calls.push(callView(r, model.chatTemplate, model.tokenizer));
      heads.push(headOf(r));
    }
  } catch (err) {
    return { entry, calls: [], error: (err as Error).message };
  }
  let nodeText: string[] | undefined;
  try {
    nodeText = await nodeTexts(store, heads, entry, model.chatTemplate, model.tokenizer);
  } catch {
    nodeText = undefined; // the counts and advantages still show
  }
  return { entry, calls, ...(nodeText ? { nodeText } : {}) };
}
