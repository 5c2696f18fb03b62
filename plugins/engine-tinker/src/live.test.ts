import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TinkerModel } from './client';
import { defaultRetry, TinkerHttp } from './http';
import { modelInput, type WireFuture, type WireSampleOutput } from './wire';

/**
 * Against a running Tinker service: SkyRL's `python -m skyrl.tinker.api` on GPUs, or hosted
 * Tinker (`CLAWGYM_TINKER_URL`, `CLAWGYM_TINKER_API_KEY`, `CLAWGYM_TINKER_BASE_MODEL`). Without a
 * URL the test starts ClawGym's own `clawgym trainer serve` (the embedded trainer, base model
 * `embedded`) and stops it by PID: then it checks the client end to end against our server, not
 * SkyRL; the conformance transcripts derived from SkyRL's source are that check.
 */
const given = process.env.CLAWGYM_TINKER_URL;
const baseModel = given ? process.env.CLAWGYM_TINKER_BASE_MODEL ?? 'Qwen/Qwen3-8B' : 'embedded';
let url = given ?? '';
let server: ChildProcess | undefined;
let dataDir: string | undefined;

beforeAll(async () => {
  if (given) return;
  dataDir = mkdtempSync(join(tmpdir(), 'clawgym-live-tinker-'));
  const child = spawn(process.execPath, [resolve(__dirname, '../../../core/bin/clawgym.js'), 'trainer', 'serve', '--port', '0', '--data', join(dataDir, 'data')], { stdio: ['ignore', 'pipe', 'pipe'] });
  server = child;
  let out = '';
  url = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => { out += d; const m = /^ClawGym trainer service \(Tinker API\) on (http:\S+)/m.exec(out); if (m) ok(m[1]!); });
    child.stderr!.on('data', (d: Buffer) => { out += d; });
    child.on('exit', (code) => fail(new Error(`clawgym trainer serve exited ${code} before it listened:\n${out}`)));
  });
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.on('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe(`live Tinker service (${given ? given : 'clawgym trainer serve, started by the test'})`, () => {
  jest.setTimeout(15 * 60_000);

  it('creates a model, scores and trains one datum, steps with lr 0, publishes and samples from the published weights', async () => {
    const http = new TinkerHttp(url, process.env.CLAWGYM_TINKER_API_KEY, { ...defaultRetry, futureTimeoutMs: 10 * 60_000 });
    const model = await TinkerModel.create(http, { baseModel, loraRank: 8, seed: 1 });
    const datum = { modelInput: Int32Array.from([100, 101, 102, 103]), targetTokens: Int32Array.from([101, 102, 103, 104]), weights: Float32Array.from([0, 1, 1, 1]) };
    const scored = await model.forward([datum]);
    expect(scored.logprobs[0]!.length).toBe(4);
    expect(Array.from(scored.logprobs[0]!).every((x) => x <= 0)).toBe(true);
    const trained = await model.forwardBackward([datum], 'cross_entropy');
    trained.logprobs[0]!.forEach((x, i) => expect(x).toBeCloseTo(scored.logprobs[0]![i]!, 2));
    await model.optimStep({ learningRate: 0, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 });
    const path = await model.saveForSampler(`clawgym-live-${Date.now()}`);
    expect(path).toMatch(/^tinker:\/\//);
    const future = await http.post<WireFuture>('/api/v1/asample', { num_samples: 1, prompt: modelInput([100, 101, 102]), sampling_params: { max_tokens: 4, seed: 1, temperature: 1, top_k: -1, top_p: 1 }, model_path: path });
    const out = await http.result<WireSampleOutput>(future, 'asample');
    expect(out.sequences[0]!.tokens.length).toBeGreaterThan(0);
    expect(out.sequences[0]!.logprobs.length).toBe(out.sequences[0]!.tokens.length);
  });
});
