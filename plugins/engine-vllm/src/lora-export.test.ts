import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteChatMl } from '@clawgym/core';
import { transcriptServer, type Exchange } from './__fixtures__/transcript';
import { createTokenIdEngine } from './token-id-client';

/*
 * What SkyRL's FSDP backend publishes for a LoRA run, and how SGLang must be launched to load it.
 *
 * An adapter, not a merged model: NovaSky-AI/SkyRL@a9564572
 * - skyrl/backends/skyrl_train_backend.py:1325-1332: save_sampler_checkpoint exports with
 *   `save_hf_model(model="policy", …)` (its TODO still says "full merged model");
 * - skyrl/backends/skyrl_train/workers/model_wrapper.py:199: the LoRA policy is
 *   `get_peft_model(self.model, lora_config)`, a PeftModel;
 * - skyrl/backends/skyrl_train/distributed/fsdp_strategy.py:566,580: save_hf_model unwraps only
 *   HFModelWrapper, so `model_to_save.save_pretrained(work_dir, state_dict=…)` is PeftModel's,
 *   which keeps the LoRA weights alone (`get_peft_model_state_dict(self,
 *   state_dict=kwargs.get("state_dict"))`, huggingface/peft src/peft/peft_model.py) and writes
 *   adapter_model.safetensors + adapter_config.json; :584 adds the base model's config.json.
 * So the tinker trainer publishes it as `kind: 'lora'` (it holds adapter_config.json), and the
 * engines load it with their LoRA routes, not update_weights_from_disk.
 *
 * SGLang's launch: ServerArgs.check_lora_server_args asserts at start "When no initial --lora-paths
 * is provided, you need to specify both --max-lora-rank and --lora-target-modules for LoRA
 * initialization." (sgl-project/sglang@8905cbd42f4a27dbecad6487cd3904278756fef8:python/sglang/srt/server_args.py:7845,
 * the same words in LoRAManager.init_state, …:python/sglang/srt/lora/lora_manager.py:500; the
 * same assertion is in server_args.py @ 0025436e, read through a stored copy without line numbers); `GET
 * /get_server_info` answers every ServerArgs field (http_server.py @ 0025436e), `enable_lora` and
 * `max_lora_rank` among them.
 */
const dir = mkdtempSync(join(tmpdir(), 'lora-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The folder SkyRL's FSDP export of a rank-32 LoRA unpacks to (Qwen3's target modules). */
function skyrlFsdpLoraExport(): string {
  const folder = join(dir, 'model_abc', 'sampler_weights', 'step-1');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'adapter_config.json'), JSON.stringify({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 32, lora_alpha: 16, target_modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'], base_model_name_or_path: 'Qwen/Qwen3-4B' }));
  writeFileSync(join(folder, 'adapter_model.safetensors'), '');
  writeFileSync(join(folder, 'config.json'), JSON.stringify({ architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3' }));
  return folder;
}

const { tokenizer, chatTemplate } = byteChatMl();
const sglang = (baseUrl: string) => createTokenIdEngine({ flavor: 'sglang', baseUrl, model: 'm', tokenizer, chatTemplate, syncRetries: 0, syncBackoffMs: 1 });
const info = (args: Record<string, unknown>): Exchange => ({ method: 'GET', url: '/get_server_info', reply: { model_path: 'Qwen/Qwen3-4B', ...args } });

describe('SkyRL FSDP + LoRA publishes an adapter; SGLang loads it only when launched for one', () => {
  it('loads the adapter with /load_lora_adapter where the server has --enable-lora and a rank that fits', async () => {
    const folder = skyrlFsdpLoraExport();
    const s = await transcriptServer([
      info({ enable_lora: true, max_lora_rank: 64, lora_target_modules: ['all'] }),
      { method: 'POST', url: '/load_lora_adapter', body: { lora_name: 'clawgym-policy-v1', lora_path: folder }, reply: { success: true, error_message: '', loaded_adapters: { 'clawgym-policy-v1': folder } } },
    ]);
    const e = sglang(s.baseUrl);
    await e.syncWeights!({ path: folder, version: 1, kind: 'lora' });
    expect(s.deviations).toEqual([]);
    expect(e.policyVersion()).toBe(1);
  });

  it.each([
    ['without --enable-lora', { enable_lora: false, max_lora_rank: null, lora_target_modules: null }, /launched without --enable-lora .*relaunch it with --enable-lora --max-lora-rank 32 --lora-target-modules all/],
    ['with too small a --max-lora-rank', { enable_lora: true, max_lora_rank: 16, lora_target_modules: ['all'] }, /--max-lora-rank is 16, below the adapter's rank 32 .*relaunch it with --enable-lora --max-lora-rank 32 --lora-target-modules all/],
  ])('a server launched %s is refused before any load, naming the flags', async (_, args, why) => {
    const folder = skyrlFsdpLoraExport();
    const s = await transcriptServer([info(args)]);
    const err = await sglang(s.baseUrl).syncWeights!({ path: folder, version: 1, kind: 'lora' }).catch((x: unknown) => x as { code: string; message: string; hint: string });
    expect(err).toMatchObject({ code: 'CLAWGYM_ENGINE_SYNC_FAILED', message: expect.stringMatching(why), hint: expect.stringContaining('--lora-target-modules all') });
    expect(s.deviations).toEqual([]);
  });
});
