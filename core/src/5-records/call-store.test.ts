import { mkdtempSync, readFileSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelCallRecord } from '../contracts/records';
import { CallStore } from './call-store';
import { idsOf } from './record-codec';

const rec = (callIndex: number, promptIds: number[], origin: ModelCallRecord['origin'], outputIds = [9, 9]): ModelCallRecord => ({
  runId: 'r', rolloutId: 'ro-1', callIndex, wireFormat: 'openai-chat', requestedModel: 'm', promptIds: Int32Array.from(promptIds), outputIds,
  outputLogprobs: outputIds.map(() => -0.5), finishReason: 'stop', origin, policyVersion: 3, timings: { receivedAt: 1, finishedAt: 2 },
});

describe('CallStore', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('stores reuse records as tails and reads back the full prompts, in order', async () => {
    const store = new CallStore(tmp('calls-'));
    const a = rec(0, [1, 2, 3], { kind: 'fork', reason: 'first call of the session' });
    const b = rec(1, [1, 2, 3, 9, 9, 4, 5], { kind: 'reuse', parentCall: 0, reusedTokens: 5 });
    const c = rec(2, [1, 2, 3, 9, 9, 4, 5], { kind: 'retry', of: 1 }, [7]);
    await Promise.all([store.append(a), store.append(b), store.append(c)]);
    const lines = readFileSync(store.path('ro-1'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[1].promptIds).toBeUndefined();
    expect(lines[1]).toMatchObject({ v: 2, ref: 0, keep: 5 });
    expect(Array.from(idsOf(lines[1].ids))).toEqual([4, 5]);
    expect(lines[2]).toMatchObject({ ref: 1, keep: 7, ids: '' });
    expect(await store.read('ro-1')).toEqual([a, b, c]);
    await store.close('ro-1');
  });

  it('writes the same line at once (a small record, its file idle) as in pieces (while its file opens)', async () => {
    const records = [
      rec(0, [1, 2, 3, 151645, 0], { kind: 'fork', reason: 'first call of the session' }),
      rec(1, [1, 2, 3, 151645, 0, 9, 9, 40, 5], { kind: 'reuse', parentCall: 0, reusedTokens: 7 }),
      rec(2, [1, 2, 3, 151645, 0, 9, 9, 40, 5], { kind: 'retry', of: 1 }, [7]),
      rec(3, [4, 151643], { kind: 'fork', reason: 'naïve 日本語 🙂 "quoted"\n' }),
      // Near the limit of a line written at once: ids that fill it, and a head of 3-byte
      // characters that fits (63 kB) and one that does not (66 kB, cut short by the write).
      rec(4, Array.from({ length: 5000 }, (_, i) => i * 37), { kind: 'fork', reason: 'many ids' }),
      rec(5, Array.from({ length: 5400 }, (_, i) => 100000 + i), { kind: 'fork', reason: 'more ids' }),
      rec(6, [1, 2, 3], { kind: 'fork', reason: '日'.repeat(21000) }),
      rec(7, [1, 2, 3], { kind: 'fork', reason: '日'.repeat(22000) }),
    ];
    const pieces = new CallStore(tmp('calls-pieces-'));
    await Promise.all(records.map((r) => pieces.append(r))); // the file is still opening: queued, written in pieces
    const once = new CallStore(tmp('calls-once-'));
    await once.append(rec(0, [8], { kind: 'fork', reason: 'opens the file' }));
    for (const r of records) await once.append({ ...r, callIndex: r.callIndex + 1 }); // idle and open: each written at once
    const text = (s: CallStore) => readFileSync(s.path('ro-1'), 'utf8').trim().split('\n');
    expect(text(once).slice(1).map((l) => l.replace(/"callIndex":\d+/, '').replace(/"ref":\d+/, ''))).toEqual(text(pieces).map((l) => l.replace(/"callIndex":\d+/, '').replace(/"ref":\d+/, '')));
    await pieces.close('ro-1');
    await once.close('ro-1');
  });

  it('survives a line cut by a crash, and names a record whose parent is missing', async () => {
    const dir = tmp('calls-');
    const store = new CallStore(dir);
    await store.append(rec(0, [1], { kind: 'fork', reason: 'first call of the session' }));
    await store.close('ro-1');
    appendFileSync(store.path('ro-1'), '{"runId":"r","rolloutId":"ro-1","callInd');
    expect(await new CallStore(dir).read('ro-1')).toHaveLength(1);
    appendFileSync(store.path('ro-1'), `\n${JSON.stringify({ ...rec(5, [], { kind: 'reuse', parentCall: 4, reusedTokens: 1 }), promptIds: undefined, promptTail: [] })}\n`);
    await expect(new CallStore(dir).read('ro-1')).rejects.toThrow('call 5 refers to call 4, which is not in the file');
  });

  it('refuses rollout ids that would escape its folder', () => {
    expect(() => new CallStore('/tmp/x').path('../evil')).toThrow('invalid rollout id');
  });

  it('stores a fork against the earlier call it shares most with, and reads it back', async () => {
    const store = new CallStore(tmp('calls-fork-'));
    const system = Array.from({ length: 300 }, (_, i) => 1000 + i);
    const a = rec(0, [...system, 1, 2], { kind: 'fork', reason: 'first call of the session' });
    const b = rec(1, [...system, 1, 2, 9, 9, 3], { kind: 'reuse', parentCall: 0, reusedTokens: 304 });
    const c = rec(2, [...system, 7, 7], { kind: 'fork', reason: 'history rewritten' });
    const d = rec(3, [5, 6], { kind: 'fork', reason: 'a subagent with its own prompt' });
    for (const r of [a, b, c, d]) await store.append(r);
    const lines = readFileSync(store.path('ro-1'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[2]).toMatchObject({ ref: 1, keep: 300 });
    expect(Array.from(idsOf(lines[2].ids))).toEqual([7, 7]);
    expect(lines[3].ref).toBeUndefined();
    expect(await store.read('ro-1')).toEqual([a, b, c, d]);
    const heads = [];
    for await (const h of store.heads('ro-1')) heads.push([h.callIndex, h.promptLength, h.outputIds.length]);
    expect(heads).toEqual([[0, 302, 2], [1, 305, 2], [2, 302, 2], [3, 2, 2]]);
    await store.close('ro-1');
  });

  it('reads files in the earlier format (ids as JSON numbers, reuses as tails, retries with no ids)', async () => {
    const dir = tmp('calls-v1-');
    const store = new CallStore(dir);
    const a = rec(0, [1, 2, 3], { kind: 'fork', reason: 'first call of the session' });
    const b = rec(1, [1, 2, 3, 9, 9, -4, 5], { kind: 'reuse', parentCall: 0, reusedTokens: 5 });
    const c = rec(2, [1, 2, 3, 9, 9, -4, 5], { kind: 'retry', of: 1 }, [7]);
    const old = (r: ModelCallRecord, field?: string, ids: number[] = []) => {
      const { promptIds: _p, ...rest } = r;
      const head = JSON.stringify(rest);
      return field ? `${head.slice(0, -1)},"${field}":[${ids.join(',')}]}` : head;
    };
    appendFileSync(store.path('ro-1'), `${old(a, 'promptIds', [1, 2, 3])}\n${old(b, 'promptTail', [-4, 5])}\n${old(c)}\n`);
    expect(await store.read('ro-1')).toEqual([a, b, c]);
    const lengths = [];
    for await (const h of store.heads('ro-1')) lengths.push(h.promptLength);
    expect(lengths).toEqual([3, 7, 7]);
  });

  it('rebuilds the prompts of a line of calls as views of one array, sized once; a fork starts another', async () => {
    const store = new CallStore(tmp('calls-chain-'));
    const records: ModelCallRecord[] = [rec(0, [1, 2, 3], { kind: 'fork', reason: 'first call of the session' })];
    for (let i = 1; i <= 20; i++) {
      const p = records[i - 1]!;
      records.push(rec(i, [...p.promptIds, ...p.outputIds, 100 + i, 200 + i], { kind: 'reuse', parentCall: i - 1, reusedTokens: p.promptIds.length + p.outputIds.length }));
    }
    // A retry of call 20, a fork from call 10's history with ids of its own, and a call that extends the fork.
    records.push(rec(21, [...records[20]!.promptIds], { kind: 'retry', of: 20 }, [8]));
    const fork = rec(22, [...records[10]!.promptIds.subarray(0, 12), 77, 78], { kind: 'reuse', parentCall: 10, reusedTokens: 12 });
    records.push(fork, rec(23, [...fork.promptIds, 9, 9, 5], { kind: 'reuse', parentCall: 22, reusedTokens: fork.promptIds.length + 2 }));
    for (const r of records) await store.append(r);
    await store.close('ro-1');
    const read = await store.read('ro-1');
    expect(read).toEqual(records);
    const buffers = new Set(read.map((r) => r.promptIds.buffer));
    expect(buffers.size).toBe(2);
    // The main line's array holds its last prompt and output, nothing more: it never grew by copying.
    const main = read[20]!.promptIds;
    expect(main.buffer.byteLength).toBe((main.length + 2) * 4);
    expect(read[21]!.promptIds.buffer).toBe(main.buffer);
    expect(read[23]!.promptIds.buffer).toBe(read[22]!.promptIds.buffer);
    expect(read[22]!.promptIds.buffer.byteLength).toBe((read[23]!.promptIds.length + 2) * 4);
  });
});
