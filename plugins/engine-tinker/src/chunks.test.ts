import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clippedTisLoss, type Datum, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import { computeGrpo } from '@clawgym/algo-grpo';
import { chunkDatums, chunkedPass, datumBytes, SDK_CHUNK } from './chunks';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { optimizer, startStandIn } from './__fixtures__/stand-in';

/*
 * Request size and storage. The Tinker SDK never sends a step as one body
 * (thinking-machines-lab/tinker@d595dc2): src/tinker/lib/public_interfaces/training_client.py:180-202
 * cuts forward/forward_backward data into chunks of at most `fwdbwd_max_chunk_len` datums and
 * `fwdbwd_max_chunk_bytes_count` estimated bytes (types/client_config_response.py:24-26: 1024 and
 * 5,000,000; the estimate at training_client.py:47-78: 4 bytes a token, loss inputs in their
 * dtype), a datum alone when it is larger. SkyRL stores each request body in its database
 * (NovaSky-AI/SkyRL@a9564572 skyrl/tinker/api.py:362-391, create_future: `request_data=serialized_request`
 * in FutureDB), so one body per step grows with
 * the step. Gradients accumulate until optim_step, so chunks change nothing for a summed loss.
 * Published versions: the trainer keeps the last `keepWeights` (3) unpacked here, and asks a
 * service that can to delete older sampler checkpoints.
 */
const datum = (tokens: number): Datum => ({
  modelInput: new Int32Array(tokens), targetTokens: new Int32Array(tokens), weights: new Float32Array(tokens),
  logprobs: new Float32Array(tokens), advantages: new Float32Array(tokens),
});

describe('forward and forward_backward in the SDK\'s chunks', () => {
  it('cuts as the SDK: at 1024 datums, before 5,000,000 estimated bytes, an oversized datum alone', () => {
    expect(datumBytes(datum(10))).toBe(10 * (4 + 8 + 4 + 4 + 4));
    expect(chunkDatums(Array.from({ length: 2100 }, () => datum(4))).map((c) => c.length)).toEqual([1024, 1024, 52]);
    // 24 bytes a token: 100,000 tokens is 2.4 MB, so two fit and the third starts a chunk.
    expect(chunkDatums([datum(100_000), datum(100_000), datum(100_000)]).map((c) => c.length)).toEqual([2, 1]);
    expect(chunkDatums([datum(10), datum(300_000), datum(10)]).map((c) => c.map((d) => d.modelInput.length))).toEqual([[10], [300_000], [10]]);
    expect(SDK_CHUNK).toEqual({ maxDatums: 1024, maxBytes: 5_000_000 });
  });

  it('puts the outputs back in order and adds the losses', async () => {
    const data = Array.from({ length: 2050 }, (_, i) => ({ ...datum(1), modelInput: Int32Array.from([i]) }));
    const sent: number[] = [];
    const r = await chunkedPass(data, async (c) => { sent.push(c.length); return { logprobs: c.map((d) => Float32Array.from([d.modelInput[0]!])), loss: c.length }; });
    expect(sent).toEqual([1024, 1024, 2]);
    expect(r.logprobs.map((x) => x[0])).toEqual(data.map((_, i) => i));
    expect(r.loss).toBe(2050);
  });
});

describe('a step and its published weights against the stand-in', () => {
  const dirs: string[] = [];
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  beforeAll(async () => { standIn = await startStandIn(); });
  afterAll(async () => { await standIn.stop(); for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  /**
   * The stand-in behind a proxy that counts the datums each training request carries and records
   * the DELETEs of checkpoints; `deletes: true` answers them as SkyRL main does (204), otherwise
   * they reach the stand-in, which has no such route (404 "Not Found"), as skyrl-v0.3.0.
   */
  async function counted(o: { deletes?: boolean } = {}) {
    const seen: { route: string; datums: number }[] = [];
    const deleted: string[] = [];
    const proxy = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', async () => {
        if (req.method === 'DELETE') {
          deleted.push(decodeURIComponent(req.url!.split('/').pop()!));
          if (o.deletes) { res.writeHead(204).end(); return; }
        }
        const b = raw ? JSON.parse(raw) : undefined;
        const input = b?.forward_input ?? b?.forward_backward_input;
        if (input) seen.push({ route: req.url!, datums: input.data.length });
        const r = await fetch(`${standIn.url}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: raw || undefined });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
    return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, seen, deleted, close: () => new Promise<void>((ok) => proxy.close(() => ok())) };
  }
  const trees = (n: number): RolloutTree[] => Array.from({ length: n }, (_, k) => ({
    rolloutId: `r${k}`, taskId: `t${k % 7}`, category: 'c', harness: 'h', outcome: 'ok', reward: k % 2, auxiliaryRoots: [], filterCounts: {},
    nodes: [
      { id: 0, parent: -1, kind: 'inserted', tokens: Int32Array.from([10, 11]), callIndex: 0 },
      { id: 1, parent: 0, kind: 'generated', tokens: Int32Array.from([40 + (k % 5), 41]), logprobs: Float32Array.from([-2, -2.5]), callIndex: 0 },
    ],
  }));
  const batchOf = (t: RolloutTree[]): TrainerBatch => ({ trees: t, advantages: computeGrpo({ algorithm: 'grpo', options: {}, trees: t }), loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss });
  const retry = { attempts: 2, baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 30_000, futureTimeoutMs: 60_000 };

  it('sends a step of 1,100 datums as two forward and two forward_backward requests, and keeps the last 3 versions of the weights', async () => {
    const proxy = await counted();
    const weightsDir = mkdtempSync(join(tmpdir(), 'clawgym-keep-'));
    dirs.push(weightsDir);
    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: proxy.url, optimizer, retry, loraRank: 0, weightsDir }), 1);
    await trainer.step(batchOf(trees(1100)));
    expect(proxy.seen).toEqual([
      { route: '/api/v1/forward', datums: 1024 }, { route: '/api/v1/forward', datums: 76 },
      { route: '/api/v1/forward_backward', datums: 1024 }, { route: '/api/v1/forward_backward', datums: 76 },
    ]);
    expect(standIn.trainer.policyVersion()).toBe(1); // one optimiser step for the whole batch
    const first = await trainer.publishWeights();
    for (let s = 0; s < 4; s++) { await trainer.step(batchOf(trees(4))); await trainer.publishWeights(); }
    const modelDir = join(weightsDir, trainer.modelId);
    expect(readdirSync(modelDir).sort()).toEqual(['step-3', 'step-3.tar.gz', 'step-4', 'step-4.tar.gz', 'step-5', 'step-5.tar.gz']);
    expect(existsSync(first.path)).toBe(false);
    // The stand-in, as skyrl-v0.3.0, has no DELETE route: asked once, then never again.
    expect(proxy.deleted).toEqual(['step-1']);
    await trainer.close();
    await proxy.close();
  }, 120_000);

  it('asks a service with the route (SkyRL main) to delete each sampler checkpoint that falls out of the last 3', async () => {
    // NovaSky-AI/SkyRL@a9564572 skyrl/tinker/api.py:1582-1620: DELETE
    // /api/v1/training_runs/{id}/checkpoints/sampler_weights/{name} removes the row, then the archive (204).
    const proxy = await counted({ deletes: true });
    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: proxy.url, optimizer, retry, loraRank: 0 }), 1);
    for (let s = 0; s < 5; s++) { await trainer.step(batchOf(trees(4))); await trainer.publishWeights(); }
    expect(proxy.deleted).toEqual(['step-1', 'step-2']);
    await trainer.close();
    await proxy.close();
  }, 120_000);
});
