import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { byteChatMl } from '@clawgym/core';
import { servers } from './__fixtures__/transcript';
import { createTokenIdEngine } from './token-id-client';

/*
 * vLLM's runtime LoRA routes as its source has them, made to count what the worker reads from disk:
 * - vllm-project/vllm@00153c8b:vllm/entrypoints/openai/models/serving.py:177-181 builds the
 *   LoRARequest with `load_inplace=request.load_inplace` and :208 keeps it in `lora_requests`, the
 *   request every later completion naming the adapter carries; :253 answers 400 "The lora adapter
 *   '<name>' has already been loaded. If you want to load the adapter in place, set
 *   'load_inplace' to True." to a second load of a name without `load_inplace`; unload (:225-236)
 *   drops the name (404 "cannot be found" for an unknown one).
 * - vllm-project/vllm@9495bf0d:vllm/lora/worker_manager.py:287 (LRUCacheWorkerLoRAManager.add_adapter)
 *   loads from disk when the adapter id is not resident *or the request says load_inplace*: so a
 *   kept `load_inplace: true` re-reads the adapter on every step (vLLM issue #33791; the fixes,
 *   PRs #36373 and #41482, are open; SkyRL worked around it in NovaSky-AI/SkyRL PR #1606).
 */
async function fakeVllm() {
  const loraRequests = new Map<string, { path: string; loadInplace: boolean }>();
  const state = { diskReads: 0, loads: 0, dropNextReply: false };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const b = raw ? JSON.parse(raw) : {};
      const error = (status: number, message: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: status === 404 ? 'NotFoundError' : 'InvalidUserInput', code: status } }));
      if (req.url === '/v1/load_lora_adapter') {
        if (!b.load_inplace && loraRequests.has(b.lora_name)) return error(400, `The lora adapter '${b.lora_name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`);
        state.diskReads++; // add_lora preloads it
        state.loads++;
        loraRequests.set(b.lora_name, { path: b.lora_path, loadInplace: b.load_inplace === true });
        if (state.dropNextReply) { state.dropNextReply = false; res.destroy(); return; } // loaded, answer lost
        return res.writeHead(200, { 'content-type': 'text/plain' }).end(`Success: LoRA adapter '${b.lora_name}' added successfully.`);
      }
      if (req.url === '/v1/unload_lora_adapter') {
        if (!loraRequests.delete(b.lora_name)) return error(404, `The lora adapter '${b.lora_name}' cannot be found.`);
        return res.writeHead(200, { 'content-type': 'text/plain' }).end(`Success: LoRA adapter '${b.lora_name}' removed successfully.`);
      }
      if (req.url === '/step') {
        // One engine step of a completion naming the adapter: the worker reloads it if its kept request says so.
        const r = loraRequests.get(b.model);
        if (!r) return error(404, `The model \`${b.model}\` does not exist.`);
        if (r.loadInplace) state.diskReads++;
        return res.writeHead(200).end('{}');
      }
      return error(404, 'Not Found');
    });
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state, loraRequests };
}

const { tokenizer, chatTemplate } = byteChatMl();

describe('vLLM LoRA: each version under its own name, never load_inplace', () => {
  it('reads each adapter from disk once, however many steps serve it', async () => {
    const v = await fakeVllm();
    const e = createTokenIdEngine({ flavor: 'vllm', baseUrl: v.baseUrl, model: 'base', tokenizer, chatTemplate, syncBackoffMs: 1 });
    for (let version = 1; version <= 3; version++) {
      await e.syncWeights!({ path: `/lora/v${version}`, version, kind: 'lora' });
      for (let step = 0; step < 50; step++) await fetch(`${v.baseUrl}/step`, { method: 'POST', body: JSON.stringify({ model: `clawgym-policy-v${version}` }) });
    }
    expect(v.state.diskReads).toBe(3); // with load_inplace: true kept, 3 + 150
    expect([...v.loraRequests.keys()]).toEqual(['clawgym-policy-v2', 'clawgym-policy-v3']); // v1 unloaded when v3 came
    expect(e.policyVersion()).toBe(3);
  });

  it('a retried load whose first answer was lost (already loaded) unloads that name and loads it again', async () => {
    const v = await fakeVllm();
    const e = createTokenIdEngine({ flavor: 'vllm', baseUrl: v.baseUrl, model: 'base', tokenizer, chatTemplate, syncBackoffMs: 1, syncRetries: 2 });
    v.state.dropNextReply = true;
    await e.syncWeights!({ path: '/lora/v1', version: 1, kind: 'lora' });
    expect(v.state.loads).toBe(2);
    expect(v.loraRequests.get('clawgym-policy-v1')).toEqual({ path: '/lora/v1', loadInplace: false });
    expect(e.policyVersion()).toBe(1);
  });
});
