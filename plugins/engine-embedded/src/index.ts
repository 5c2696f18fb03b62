import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { AdamOptions, byteChatMl, ClawGymError, definePlugin, ErrorCodes, parseWithSchema, Tokens, z, type ComputeKernels, type EngineProvider, type ProviderContext, type Registry, type TrainerProvider } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { CompactTemplate } from './compact-template';
import { EmbeddedEngine } from './engine';
import type { ModelConfig } from './model';
import { SharedPolicy } from './policy';
import { EmbeddedTrainer } from './trainer';

export { EmbeddedEngine, samplingLogprobs } from './engine';
export { EmbeddedTrainer, type OptimizerConfig, type TrainerThreading } from './trainer';
export { SharedPolicy } from './policy';
export { Transformer, initParams, parameterShapes, ancestorMask, zerosLike, type ModelConfig, type Params } from './model';
export { KvDecoder } from './decode';
export { CompactTemplate, toolParams, type CompactOptions } from './compact-template';
export { saveSafetensors, loadSafetensors, type Tensor } from './safetensors';
export { publishPolicy, loadPolicyWeights } from './weights';

/** A path from the options, relative to the config's folder. */
const resolveFrom = (ctx: ProviderContext, path: string) => (isAbsolute(path) ? path : resolve(ctx.rootDir ?? process.cwd(), path));

/** The checkpoints this package ships (`checkpoints/<name>` in the package): `cold-start` is the default run's. */
export const SHIPPED_CHECKPOINTS = join(__dirname, '..', 'checkpoints');

/**
 * The folder of the `checkpoint` option: a folder relative to the config's, or else, for a bare
 * name, the checkpoint of that name this package ships (so `checkpoint: 'cold-start'` works
 * wherever the package is installed). A missing one is reported by the load, at the config's path.
 */
export function checkpointDir(ctx: ProviderContext, path: string): string {
  const own = resolveFrom(ctx, path);
  if (existsSync(own) || !/^[\w.-]+$/.test(path)) return own;
  const shipped = join(SHIPPED_CHECKPOINTS, path);
  return existsSync(shipped) ? shipped : own;
}

/** Options shared by the `embedded` engine and trainer slots (they must agree: they share weights). */
export const EmbeddedOptions = z.strictObject({
  model: z.strictObject({
    dModel: z.number().int().positive().default(64),
    layers: z.number().int().positive().default(2),
    heads: z.number().int().positive().default(4),
    context: z.number().int().positive().default(512),
    mlpHidden: z.number().int().positive().optional(),
    valueHead: z.boolean().default(true),
    /** Train the value head alone, not the shared layers under it (see ModelConfig.valueDetach). */
    valueDetach: z.boolean().default(true),
  }).prefault({}),
  /**
   * A checkpoint folder (model.safetensors + config.json) to start from (weights only; relative to
   * the config's folder), or the name of one this package ships (`cold-start`).
   */
  checkpoint: z.string().optional(),
  /**
   * Chat template: `compact` (default: tools as name(params), the harness's system prompt cut,
   * short call syntax) or `chatml` (Qwen3/Hermes, JSON tool schemas in the system turn).
   */
  template: z.strictObject({
    kind: z.enum(['compact', 'chatml']).default('compact'),
    systemChars: z.number().int().min(0).default(0),
    toolResultChars: z.number().int().positive().default(1500),
  }).prefault({}),
  /** Kernels provider by name (default: the `cpu` kernels' (@clawgym/kernels-cpu)). */
  kernels: z.string().default('cpu'),
  /**
   * Compute each RL step's gradient in a worker thread (the same code on a copy of the weights,
   * so the same floats), so that the run's proxy, rollouts and an in-process engine keep going
   * while a step computes (default). Steps with a plugin's policy loss or other kernels than
   * `cpu` are computed in the main thread either way.
   */
  trainerWorker: z.boolean().default(true),
  optimizer: AdamOptions.extend({
    /**
     * The value head's learning rate as a multiple of lr. Adam moves a weight by about lr per
     * step, so at the policy's lr a fresh head would need thousands of steps to reach the mean
     * reward; PPO's advantages R − V are noise until it does.
     */
    valueLrScale: z.number().positive().default(30),
  }).prefault({}),
});

/**
 * `@clawgym/engine-embedded`: a small transformer in TypeScript that is both the engine and the
 * trainer of a run, sharing one set of weights in the process.
 */
export default definePlugin({
  name: 'clawgym:engine-embedded',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    const registry = api.container.resolve(Tokens.Registry) as Registry;
    // One policy per run directory, shared by the engine and the trainer created for it.
    const policies = new Map<string, { policy: SharedPolicy; trainer?: EmbeddedTrainer; options: z.output<typeof EmbeddedOptions> }>();
    const policyFor = async (raw: Record<string, unknown>, ctx: ProviderContext) => {
      const options = parseWithSchema(EmbeddedOptions, raw, 'options of the embedded engine/trainer');
      const existing = policies.get(ctx.runDir);
      if (existing) {
        if (JSON.stringify(existing.options) !== JSON.stringify(options)) {
          throw new ClawGymError(ErrorCodes.CONFIG_INVALID, 'the embedded engine and trainer of one run share their weights, but were given different options', { hint: 'Give them once, on the engine: `trainer: \'embedded\'` then uses the engine\'s.' });
        }
        return existing;
      }
      const { tokenizer } = byteChatMl();
      const m = options.model;
      if (m.dModel % m.heads !== 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `model.dModel (${m.dModel}) must be divisible by model.heads (${m.heads})`, { hint: 'Each attention head gets dModel / heads dimensions: pick heads that divide dModel.' });
      const config: ModelConfig = { vocabSize: tokenizer.vocabSize, dModel: m.dModel, layers: m.layers, heads: m.heads, context: m.context, mlpHidden: m.mlpHidden ?? 4 * m.dModel, valueHead: m.valueHead, valueDetach: m.valueDetach };
      // The default `cpu` kernels come with this package (@clawgym/kernels-cpu); others from a plugin that provides them.
      const kernels = (options.kernels === 'cpu' && !registry.has('kernels', 'cpu') ? cpuKernels() : registry.get('kernels', options.kernels)) as ComputeKernels;
      const entry = { policy: new SharedPolicy(config, kernels, ctx.seed), options };
      policies.set(ctx.runDir, entry);
      if (options.checkpoint) await trainerOf(entry).load(checkpointDir(ctx, options.checkpoint), { weightsOnly: true });
      return entry;
    };
    const trainerOf = (e: { policy: SharedPolicy; trainer?: EmbeddedTrainer; options: z.output<typeof EmbeddedOptions> }) =>
      (e.trainer ??= new EmbeddedTrainer(e.policy, e.options.optimizer, { worker: e.options.trainerWorker }));
    const engine: EngineProvider = {
      name: 'embedded',
      async create(options, ctx) {
        const { policy, options: o } = await policyFor(options, ctx);
        const { tokenizer, chatTemplate } = byteChatMl();
        const template = o.template.kind === 'chatml' ? chatTemplate : new CompactTemplate(tokenizer, o.template);
        return new EmbeddedEngine(policy, tokenizer, template, ctx.seed);
      },
    };
    const trainer: TrainerProvider = {
      name: 'embedded',
      async create(options, ctx) {
        const t = trainerOf(await policyFor(options, ctx));
        // A folder per published version, for engines in other processes (`clawgym engine serve`).
        if (ctx.runDir) t.publishDir = join(ctx.runDir, 'weights');
        return t;
      },
    };
    api.provide.engine(engine);
    api.provide.trainer(trainer);
  },
});
