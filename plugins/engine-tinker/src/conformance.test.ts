import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eachToken, ClawGymError, clippedTisLoss, type TrainerBatch, type RolloutTree , z } from '@clawgym/core';
import { testModelDir } from '@clawgym/model-hf/testing';
import { tinkerEngineProvider } from './engine';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { SKYRL_COMMIT } from './wire';
import { loadContract, openapiOf } from './contracts';
import { ContractCheck } from './__fixtures__/contract-check';

/*
 * Conformance with SkyRL's open Tinker server, NovaSky-AI/SkyRL at commit
 * a9564572eb8e91076be43c1bd5e4615e3de17265: the request schemas below restate the pydantic models
 * of skyrl/tinker/api.py (CreateSessionRequest, CreateModelRequest, ForwardBackwardInput with its
 * per-loss loss_fn_config keys, ForwardRequest, OptimStepRequest/AdamParams,
 * SaveWeightsForSamplerRequest, SaveWeightsRequest, LoadWeightsRequest, SampleRequest,
 * RetrieveFutureRequest), and the answers are the shapes its routes and skyrl/tinker/types.py
 * give (FutureResponse, CreateModelOutput, ForwardBackwardOutput as skyrl/backends/jax.py fills it,
 * OptimStepOutput, SaveWeightsForSamplerOutput, SaveWeightsOutput, LoadWeightsOutput, SampleOutput;
 * 408 "Timeout waiting for result" and 400 {detail} from retrieve_future). The client must send
 * only what those models accept and read only what they give. Each request is also checked against
 * the contract scripts/server-contracts read from that source (contracts/skyrl-main.json), with
 * the fields the Tinker SDK sends (contracts/tinker-sdk.json) tolerated, as SkyRL drops them.
 */
const contract = new ContractCheck('skyrl-main', 'tinker-sdk');
const ID = /^[a-zA-Z0-9_-]+$/;
const int = z.number().int();
// TensorData reads `data`; the SDK adds dtype and shape, which pydantic ignores.
const Tensor = z.strictObject({ data: z.array(z.number()), dtype: z.enum(['int64', 'float32']).optional(), shape: z.array(int).optional() });
const Datum = z.strictObject({
  model_input: z.strictObject({ chunks: z.array(z.strictObject({ type: z.literal('encoded_text'), tokens: z.array(int) })) }),
  loss_fn_inputs: z.record(z.string(), Tensor).refine((x) => 'target_tokens' in x, 'target_tokens is required (Datum.to_types)'),
});
const allowedConfig: Record<string, string[]> = { cross_entropy: [], importance_sampling: [], ppo: ['clip_low_threshold', 'clip_high_threshold', 'value_clip'] };
const PassInput = z.strictObject({
  data: z.array(Datum),
  loss_fn: z.enum(['cross_entropy', 'importance_sampling', 'ppo', 'gspo', 'cispo', 'ppo_critic', 'dppo']),
  loss_fn_config: z.record(z.string(), z.number()).nullish(),
}).refine((x) => !x.loss_fn_config || Object.keys(x.loss_fn_config).every((k) => allowedConfig[x.loss_fn]?.includes(k)), 'loss_fn_config keys not allowed for loss_fn');
const seq = int.nullish();
const requests: Record<string, z.ZodType> = {
  '/api/v1/create_session': z.strictObject({ tags: z.array(z.string()), user_metadata: z.record(z.string(), z.unknown()).nullish(), sdk_version: z.string(), type: z.literal('create_session').optional() }),
  // model_seq_id and type are the SDK's (hosted Tinker requires model_seq_id); SkyRL drops both.
  '/api/v1/create_model': z.strictObject({ session_id: z.string(), model_seq_id: int.optional(), base_model: z.string(), lora_config: z.strictObject({ rank: int, seed: int.nullish() }), model_role: z.string().optional(), type: z.literal('create_model').optional() }),
  '/api/v1/forward': z.strictObject({ model_id: z.string(), forward_input: PassInput, seq_id: seq }),
  '/api/v1/forward_backward': z.strictObject({ model_id: z.string(), forward_backward_input: PassInput, seq_id: seq }),
  // grad_clip_norm is hosted Tinker's; SkyRL's AdamParams ignores it (pydantic drops unknown fields).
  '/api/v1/optim_step': z.strictObject({ model_id: z.string(), adam_params: z.strictObject({ learning_rate: z.number().min(0), beta1: z.number().min(0).lt(1), beta2: z.number().min(0).lt(1), eps: z.number().gt(0), weight_decay: z.number().min(0), grad_clip_norm: z.number().optional() }), seq_id: seq }),
  '/api/v1/save_weights_for_sampler': z.strictObject({ model_id: z.string(), path: z.string().regex(ID).max(255).nullish(), sampling_session_seq_id: int.nullish(), seq_id: seq, type: z.literal('save_weights_for_sampler').optional() }).refine((x) => x.path || (x.sampling_session_seq_id != null && x.seq_id != null)),
  '/api/v1/save_weights': z.strictObject({ model_id: z.string(), path: z.string().regex(ID), type: z.literal('save_weights').nullish() }),
  '/api/v1/load_weights': z.strictObject({ model_id: z.string(), path: z.string(), optimizer: z.boolean().optional(), seq_id: seq, type: z.literal('load_weights').nullish() }),
  '/api/v1/asample': z.strictObject({
    num_samples: int.optional(), prompt: z.strictObject({ chunks: z.array(z.strictObject({ type: z.literal('encoded_text'), tokens: z.array(int) })) }),
    sampling_params: z.strictObject({ max_tokens: int.positive(), seed: int.nullish(), stop: z.union([z.array(int), z.array(z.string())]).nullish(), temperature: z.number().optional(), top_k: int.optional(), top_p: z.number().optional() }),
    base_model: z.string().nullish(), model_path: z.string().nullish(), sampling_session_id: z.string().nullish(), seq_id: seq, prompt_logprobs: z.boolean().nullish(), topk_prompt_logprobs: int.min(0).optional(), type: z.literal('sample').optional(),
  }).refine((x) => (x.base_model == null) !== (x.model_path == null), 'exactly one of base_model or model_path'),
  '/api/v1/retrieve_future': z.strictObject({ request_id: z.string() }),
  '/api/v1/unload_model': z.strictObject({ model_id: z.string(), type: z.string().nullish() }),
  '/api/v1/session_heartbeat': z.strictObject({ session_id: z.string(), type: z.literal('session_heartbeat').optional() }),
  'GET /api/v1/healthz': z.strictObject({}),
  // FastAPI's own document of the routes: the client reads whether OptimStepRequest has seq_id.
  'GET /openapi.json': z.strictObject({}),
  // list_checkpoints: a GET without a body.
  'GET /api/v1/training_runs/model_1234abcd/checkpoints': z.strictObject({}),
};

type Exchange = { route: string; answer: (body: any) => { status?: number; body: unknown } };
const future = (id: string) => () => ({ body: { future_id: id, status: 'pending', request_id: id } });
const tensor = (xs: number[]) => ({ data: xs, dtype: 'float32', shape: [xs.length] });

/** Replays a transcript: each request must be the next one expected and valid for SkyRL's model. */
async function replay(transcript: Exchange[]) {
  const seen: { route: string; body: any }[] = [];
  let at = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      const body = JSON.parse(text || '{}');
      const route = req.url ?? '';
      seen.push({ route, body });
      const next = transcript[at++];
      const schema = requests[req.method === 'GET' ? `GET ${route}` : route];
      const parsed = schema?.safeParse(body);
      const problems = route === '/openapi.json' ? [] : contract.request(req.method ?? 'GET', route, req.method === 'GET' ? undefined : body);
      let out: { status?: number; body: unknown };
      if (!next || next.route !== route) out = { status: 599, body: { detail: `transcript expected ${next?.route ?? 'nothing'}, got ${route}` } };
      else if (!parsed?.success) out = { status: 422, body: { detail: parsed?.error.issues ?? 'no such route' } };
      else if (problems.length) out = { status: 422, body: { detail: problems } };
      else out = next.answer(body);
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, seen, done: () => at === transcript.length, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

const tree: RolloutTree = {
  rolloutId: 'r', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: Int32Array.from([1, 2]), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: Int32Array.from([3, 4, 5]), logprobs: Float32Array.from([-1, -1, -1]), callIndex: 0 },
  ],
};
const batch: TrainerBatch = {
  trees: [tree], loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss,
  advantages: { algorithm: 'grpo', metrics: {}, advantages: new Map([['r', new Map([[1, Float32Array.from([0.5, 0.5, 0.5])]])]]) },
};
const retry = { attempts: 2, baseDelayMs: 5, maxDelayMs: 5, requestTimeoutMs: 5000, futureTimeoutMs: 5000 };
/** `TinkerTrainer.create` asks whether the service is up; the model itself is created on first use. */
const healthz: Exchange = { route: '/api/v1/healthz', answer: () => ({ body: { status: 'ok' } }) };
const createModel: Exchange[] = [
  healthz,
  { route: '/openapi.json', answer: () => ({ body: openapiOf(loadContract('skyrl-main')) }) },
  { route: '/api/v1/create_session', answer: () => ({ body: { type: 'create_session', info_message: null, warning_message: null, error_message: null, session_id: 'session_0a1b2c3d' } }) },
  { route: '/api/v1/create_model', answer: (b) => ({ body: { model_id: 'model_1234abcd', base_model: b.base_model, lora_config: b.lora_config, status: 'created', request_id: '1' } }) },
  { route: '/api/v1/retrieve_future', answer: () => ({ body: { model_id: 'model_1234abcd', base_model: 'Qwen/Qwen3-8B', lora_config: { rank: 32, alpha: 32, seed: 1, train_attn: true, train_mlp: true, train_unembed: false } } }) },
];

describe(`Tinker API conformance with SkyRL's server (skyrl/tinker/api.py at ${SKYRL_COMMIT.slice(0, 10)})`, () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('training: session, model, forward, forward_backward (ppo), optim_step, save_weights_for_sampler, save_weights, then load_weights into a new model', async () => {
    // π_old = −0.5 per target: ρ = exp(−0.5 − (−1)) ≈ 1.65 (under the cap of 2) multiplies A = 0.5, over N = 3 tokens.
    const rho = Math.exp(0.5);
    const transcript: Exchange[] = [
      ...createModel,
      { route: '/api/v1/forward', answer: future('2') },
      { route: '/api/v1/retrieve_future', answer: () => ({ status: 408, body: { detail: 'Timeout waiting for result' } }) },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { loss_fn_output_type: 'scalar', loss_fn_outputs: [{ logprobs: tensor([-0.5, -0.5, -0.5, -0.5]) }], metrics: {} } }) },
      { route: '/api/v1/forward_backward', answer: future('3') },
      // SkyRL's JAX backend: per-datum elementwise_loss and logprobs, empty metrics.
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { loss_fn_output_type: 'scalar', loss_fn_outputs: [{ elementwise_loss: tensor([0, -0.1, -0.1, -0.1]), logprobs: tensor([-0.5, -0.5, -0.5, -0.5]) }], metrics: {} } }) },
      { route: '/api/v1/optim_step', answer: future('4') },
      // SkyRL FSDP's OptimStepOutput (skyrl_train_backend.py optim_step): metrics under skyrl.ai/ names.
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { metrics: { 'skyrl.ai/grad_norm': 0.75, 'skyrl.ai/learning_rate': 3e-5 } } }) },
      { route: '/api/v1/save_weights_for_sampler', answer: future('5') },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { path: 'tinker://model_1234abcd/step-1', type: 'save_weights_for_sampler', sampling_session_id: null } }) },
      { route: '/api/v1/save_weights', answer: future('6') },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { path: 'tinker://model_1234abcd/weights/state-1', type: 'save_weights' } }) },
      // Resuming: the old model goes first (SkyRL FSDP holds one), as UnloadModelResponse / UnloadModelOutput answer.
      { route: '/api/v1/unload_model', answer: (b) => ({ body: { request_id: '9', model_id: b.model_id } }) },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { model_id: 'model_1234abcd', status: 'unloaded' } }) },
      { route: '/openapi.json', answer: () => ({ body: openapiOf(loadContract('skyrl-main')) }) },
      { route: '/api/v1/create_session', answer: () => ({ body: { type: 'create_session', session_id: 'session_ffff0000' } }) },
      { route: '/api/v1/create_model', answer: (b) => ({ body: { model_id: 'model_5678ef01', base_model: b.base_model, lora_config: b.lora_config, status: 'created', request_id: '7' } }) },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { model_id: 'model_5678ef01', base_model: 'Qwen/Qwen3-8B', lora_config: { rank: 32, alpha: 32, seed: 1 } } }) },
      { route: '/api/v1/load_weights', answer: future('8') },
      { route: '/api/v1/retrieve_future', answer: () => ({ body: { type: 'load_weights' } }) },
    ];
    const server = await replay(transcript);
    try {
      const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: server.url, baseModel: 'Qwen/Qwen3-8B', retry }), 1);
      const m = await trainer.step(batch);
      const published = await trainer.publishWeights();
      const dir = mkdtempSync(join(tmpdir(), 'clawgym-conf-'));
      dirs.push(dir);
      await trainer.save(dir);
      await trainer.load(dir);
      expect(server.done()).toBe(true);
      const body = (route: string) => server.seen.filter((s) => s.route === route).map((s) => s.body);
      // One datum: inputs [1 2 3 4], targets [2 3 4 5]; the prompt's own token is only read.
      const fb = body('/api/v1/forward_backward')[0];
      const datum = fb.forward_backward_input.data[0];
      expect(datum.model_input).toEqual({ chunks: [{ type: 'encoded_text', tokens: [1, 2, 3, 4] }] });
      expect(datum.loss_fn_inputs.target_tokens).toEqual({ data: [2, 3, 4, 5], dtype: 'int64', shape: [4] });
      expect(datum.loss_fn_inputs.weights.data).toEqual([0, 1, 1, 1]);
      expect(datum.loss_fn_inputs.logprobs.data).toEqual([-0.5, -0.5, -0.5, -0.5]);
      datum.loss_fn_inputs.advantages.data.forEach((a: number, i: number) => expect(a).toBeCloseTo(i === 0 ? 0 : (0.5 * rho) / 3, 6));
      expect(fb.forward_backward_input.loss_fn).toBe('ppo');
      expect(fb.forward_backward_input.loss_fn_config).toEqual({ clip_low_threshold: 0.8, clip_high_threshold: 1.28 });
      // The sequence numbers of one model's training requests count up, so retries are deduplicated.
      expect([body('/api/v1/forward')[0].seq_id, fb.seq_id, body('/api/v1/optim_step')[0].seq_id]).toEqual([1, 2, 3]);
      expect(body('/api/v1/optim_step')[0].adam_params).toEqual({ learning_rate: 3e-4 / 10, beta1: 0.9, beta2: 0.99, eps: 1e-8, weight_decay: 0.01, grad_clip_norm: 1 });
      expect(body('/api/v1/load_weights')[0]).toEqual({ model_id: 'model_5678ef01', path: 'tinker://model_1234abcd/weights/state-1', optimizer: true });
      expect(body('/api/v1/unload_model')).toEqual([{ model_id: 'model_1234abcd', type: 'unload_model' }]);
      expect(m.loss).toBeCloseTo(-0.3, 6); // the sum of elementwise_loss: SkyRL sends no loss metric
      expect(m.mismatchAbsLogp).toBeCloseTo(0.5, 6);
      expect(m.tokens).toBe(3);
      expect(m.gradNorm).toBe(0.75); // read under SkyRL's name
      expect(published).toEqual({ path: 'tinker://model_1234abcd/step-1', version: 1, kind: 'lora' });
      expect(JSON.parse(readFileSync(join(dir, 'tinker.json'), 'utf8'))).toMatchObject({ modelId: 'model_1234abcd', statePath: 'tinker://model_1234abcd/weights/state-1', optimizerSteps: 1 });
      expect(trainer.policyVersion()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('training: a save retried after a lost answer gets SkyRL\'s 409 for its pending checkpoint, and is used once list_checkpoints has it as completed', async () => {
    const listing = (done: boolean) => () => ({ body: { checkpoints: done ? [{ checkpoint_id: 'step-0', checkpoint_type: 'sampler', time: '2026-12-04T19:20:00Z', tinker_path: 'tinker://model_1234abcd/sampler_weights/step-0' }] : [] } });
    const server = await replay([
      ...createModel,
      // The first try's answer is lost (a proxy's 502); the retry finds the row create_checkpoint made.
      { route: '/api/v1/save_weights_for_sampler', answer: () => ({ status: 502, body: { detail: 'Bad Gateway' } }) },
      { route: '/api/v1/save_weights_for_sampler', answer: () => ({ status: 409, body: { detail: "Checkpoint 'step-0' already exists for model 'model_1234abcd'" } }) },
      // list_checkpoints answers only COMPLETED rows: pending at first, then done.
      { route: '/api/v1/training_runs/model_1234abcd/checkpoints', answer: listing(false) },
      { route: '/api/v1/training_runs/model_1234abcd/checkpoints', answer: listing(true) },
    ]);
    try {
      const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: server.url, baseModel: 'Qwen/Qwen3-8B', retry }), 1);
      await expect(trainer.publishWeights()).resolves.toEqual({ path: 'tinker://model_1234abcd/step-0', version: 0, kind: 'lora' });
      expect(server.done()).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('training: an operation that failed on the server (retrieve_future 400 {detail}) stops with a coded error quoting it', async () => {
    const server = await replay([
      ...createModel,
      { route: '/api/v1/forward', answer: future('2') },
      { route: '/api/v1/retrieve_future', answer: () => ({ status: 400, body: { detail: 'Model model_1234abcd not loaded (likely stale request from previous server)' } }) },
    ]);
    try {
      const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: server.url, baseModel: 'Qwen/Qwen3-8B', retry }), 1);
      const err = await trainer.step(batch).catch((e: unknown) => e) as ClawGymError;
      expect(err.code).toBe('CLAWGYM_TRAINER_SERVICE');
      expect(err.message).toBe(`Tinker service at ${server.url}: forward (request 2) failed: Model model_1234abcd not loaded (likely stale request from previous server)`);
    } finally {
      await server.close();
    }
  });

  it('sampling: asample from the base model (SkyRL JAX, hosted Tinker), then from the published tinker:// path; SampleOutput tokens and logprobs out', async () => {
    const sample = (tokens: number[]) => ({ body: { sequences: [{ stop_reason: 'stop', tokens, logprobs: tokens.map((t) => -t / 100) }], prompt_logprobs: null } });
    const server = await replay([
      { route: '/api/v1/asample', answer: future('1') },
      { route: '/api/v1/retrieve_future', answer: () => sample([104, 105, 257]) },
      { route: '/api/v1/asample', answer: future('2') },
      { route: '/api/v1/retrieve_future', answer: () => ({ status: 408, body: { detail: 'Timeout waiting for result' } }) },
      { route: '/api/v1/retrieve_future', answer: () => sample([106]) },
    ]);
    try {
      const engine = await tinkerEngineProvider.create({ baseUrl: server.url, baseModel: 'Qwen/Qwen3-8B', tokenizer: testModelDir('qwen3'), retry }, { runDir: '', seed: 1 });
      // Qwen3's own tokenizer and template, not the byte-level pair: <|im_end|> is 151645 there.
      expect(engine.chatTemplate.stopIds).toContain(151645);
      expect(engine.tokenizer.decode(engine.tokenizer.encode('héllo 你好'))).toBe('héllo 你好');
      expect(Array.from(engine.tokenizer.encode('hello'))).toEqual([14990]);
      const run = async () => { const out: [number, number][] = []; for await (const t of eachToken(engine.generate({ promptIds: Int32Array.from([7, 8]), sampling: { maxTokens: 16, temperature: 1, topP: 0.9, seed: 3 } }))) out.push([t.tokenId, t.logprob]); return out; };
      expect(await run()).toEqual([[104, -1.04], [105, -1.05], [257, -2.57]]);
      await engine.syncWeights!({ path: 'tinker://model_1234abcd/step-1', version: 1, kind: 'lora' });
      expect(await run()).toEqual([[106, -1.06]]);
      expect(engine.policyVersion()).toBe(1);
      const [first, second] = server.seen.filter((s) => s.route === '/api/v1/asample').map((s) => s.body);
      expect(first).toEqual({ num_samples: 1, prompt: { chunks: [{ type: 'encoded_text', tokens: [7, 8] }] }, sampling_params: { max_tokens: 16, seed: 3, stop: engine.chatTemplate.stopIds, temperature: 1, top_k: -1, top_p: 0.9 }, base_model: 'Qwen/Qwen3-8B', type: 'sample' });
      expect(second.model_path).toBe('tinker://model_1234abcd/step-1');
      expect(second.base_model).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe('SkyRL FSDP/Megatron sampling (skyrl_train_backend.py sample(): model_id "" is no policy)', () => {
  it('a base-model asample fails in its future; the engine says to publish first or name a checkpoint', async () => {
    const server = await replay([
      { route: '/api/v1/asample', answer: future('1') },
      { route: '/api/v1/retrieve_future', answer: () => ({ status: 400, body: { detail: "Sampling requested for unknown model_id(s): ['']" } }) },
    ]);
    try {
      const engine = await tinkerEngineProvider.create({ baseUrl: server.url, retry }, { runDir: '', seed: 1 });
      const drain = async () => { for await (const _ of engine.generate({ promptIds: Int32Array.from([7, 8]), sampling: { maxTokens: 4, temperature: 1, topP: 1 } })); };
      const err = await drain().catch((e: unknown) => e) as ClawGymError;
      expect(err).toBeInstanceOf(ClawGymError);
      expect(err.message).toMatch(/does not sample the base model/);
      expect(err.hint).toMatch(/modelPath/);
      expect(server.done()).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('engine "tinker" and the base model\'s tokenizer', () => {
  it('refuses a real base model without its tokenizer folder, saying what to pass', async () => {
    const err = await tinkerEngineProvider.create({ baseUrl: 'http://127.0.0.1:9', baseModel: 'Qwen/Qwen3-8B' }, { runDir: '', seed: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClawGymError);
    expect((err as ClawGymError).message).toMatch(/needs engine\.options\.tokenizer/);
    expect((err as ClawGymError).hint).toMatch(/tokenizer: '\.\/models/);
  });

  it('keeps the byte-level pair for the embedded model that clawgym trainer serve samples', async () => {
    const engine = await tinkerEngineProvider.create({ baseUrl: 'http://127.0.0.1:9', baseModel: 'embedded' }, { runDir: '', seed: 1 });
    expect(Array.from(engine.tokenizer.encode('hi'))).toEqual([104, 105]);
  });
});
