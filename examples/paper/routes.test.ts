import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assertWeightsRoute, composeRun, createKernel, ErrorCodes, resolveConfig } from '@clawgym/core';
import { paperConfig, type PaperSetup } from './clawgym.config';

/**
 * The paper's config on real servers: which engine loads what SkyRL publishes. With neither
 * checkpointsDir nor weightsDir the tinker trainer publishes the path save_weights_for_sampler
 * answers, `tinker://<model_id>/<checkpoint_id>` (NovaSky-AI/SkyRL@a9564572:skyrl/tinker/engine.py:694,
 * `output_path_str = f"tinker://{model_id}/{checkpoint_id}"`), which only SkyRL's own asample
 * resolves (skyrl/tinker/api.py:1327, TinkerPath.parse); vLLM's /v1/load_lora_adapter and
 * SGLang's /load_lora_adapter read a folder. Before this check the run met it at its first weight
 * sync, as CLAWGYM_ENGINE_SYNC_FAILED blaming the engine's flags.
 */
const dir = mkdtempSync(join(tmpdir(), 'paper-routes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const setup = (p: Partial<PaperSetup>): PaperSetup => ({ taskDir: dir, benchDir: dir, tokenizer: 'models/qwen3-4b', tinkerUrl: 'http://127.0.0.1:8000', standins: false, ...p });
const route = async (p: Partial<PaperSetup>) => {
  const config = resolveConfig(paperConfig(setup(p)), { rootDir: __dirname });
  const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
  try { await assertWeightsRoute(kernel, config); } finally { await kernel.dispose(); }
};

describe('examples/paper: the weights reach the engine that samples', () => {
  it('samples through SkyRL by default (engine "tinker", no folder), stand-ins included; the SGLang stand-in loads folders', async () => {
    const config = resolveConfig(paperConfig(setup({})), { rootDir: __dirname });
    expect([config.engine, config.trainer].map((s) => (typeof s === 'string' ? s : s.use))).toEqual(['tinker', 'tinker']);
    expect((config.trainer as { options: Record<string, unknown> }).options).not.toHaveProperty('checkpointsDir');
    await expect(route({})).resolves.toBeUndefined();
    await expect(route({ standins: true })).resolves.toBeUndefined();
    await expect(route({ standins: true, engine: 'sglang' })).resolves.toBeUndefined();
    await expect(route({ engine: 'vllm', checkpointsDir: '/data/skyrl-checkpoints' })).resolves.toBeUndefined();
    await expect(route({ engine: 'sglang', checkpointsDir: '/data/skyrl-checkpoints' })).resolves.toBeUndefined();
  });

  it.each(['vllm', 'sglang'] as const)('with engine "%s" and no checkpoints folder: refused before anything starts, naming both options and engine "tinker"', async (engine) => {
    const err = (await route({ engine }).then(() => undefined, (e: unknown) => e)) as { code: string; message: string; hint: string };
    expect(err).toMatchObject({ code: ErrorCodes.WEIGHTS_UNREACHABLE });
    expect(err.message).toMatch(/tinker:\/\/<model>\/<checkpoint> paths/);
    expect(err.message).toContain(`engine "${engine}" loads weights from a folder`);
    expect(err.hint).toContain("engine: { use: 'tinker'");
    expect(err.hint).toContain('trainer.options.checkpointsDir');
    expect(err.hint).toContain('trainer.options.weightsDir');
    // A run stops there too, before it creates an engine, a trainer or a sandbox.
    const config = resolveConfig(paperConfig(setup({ engine })), { rootDir: __dirname });
    await expect(composeRun({ config, purpose: 'run', name: 'routes', runDir: join(dir, 'run'), logger: { info: () => {}, warn: () => {} } })).rejects.toMatchObject({ code: ErrorCodes.WEIGHTS_UNREACHABLE });
  });
});

// `clawgym doctor`, as a user runs it (the built CLI), reports the same.
const bin = resolve(__dirname, '../../core/bin/clawgym.js');
describe('clawgym doctor --config examples/paper/clawgym.config.ts', () => {
  const doctor = (env: Record<string, string>) => {
    const r = spawnSync(process.execPath, [bin, 'doctor', '--config', join(__dirname, 'clawgym.config.ts'), '--json'], {
      cwd: dir, encoding: 'utf8', timeout: 90_000, env: { ...process.env, CLAWGYM_TASK_DIR: dir, CLAWGYM_BENCH_DIR: dir, ...env },
    });
    return (JSON.parse(r.stdout) as { status: string; what: string; detail: string }[]).find((x) => x.what.startsWith('weights:'));
  };
  it('has a weights row: missing for vLLM fed tinker:// paths, ok for the default route and with SKYRL_CHECKPOINTS', () => {
    expect(doctor({ PAPER_ENGINE: 'vllm' })).toMatchObject({ status: 'missing', what: 'weights: trainer tinker → engine vllm', detail: expect.stringMatching(/tinker:\/\/.*checkpointsDir.*weightsDir/s) });
    expect(doctor({})).toMatchObject({ status: 'ok', what: 'weights: trainer tinker → engine tinker' });
    expect(doctor({ PAPER_ENGINE: 'vllm', SKYRL_CHECKPOINTS: dir })).toMatchObject({ status: 'ok' });
  }, 200_000);
});
