/**
 * Whether an SGLang server applies a per-request seed, learnt once per server.
 *
 * SGLang reads `sampling_params.sampling_seed` (`python/sglang/srt/sampling/sampling_params.py`
 * @ 00c17cafcb9e289d5ca97c50e44ada54e4fd5b03) and samples with it only under
 * `--enable-deterministic-inference` (a `ServerArgs` field at 0025436e and after); without the flag
 * the seed changes nothing. A server that does not know the field fails the whole request:
 * `TokenizerManager` builds `SamplingParams(**sampling_params)`, so an unknown key is a
 * `TypeError`, which `/generate` does not catch (it catches `ValueError`): HTTP 500, or a stream
 * cut after its 200 (`tokenizer_manager.py`, `http_server.py` @ 0025436e). So the seed is sent only
 * where `GET /get_server_info` (every `ServerArgs` field, `http_server.py` @ 0025436e) says
 * `enable_deterministic_inference: true`; anywhere else it is left out, as it would do nothing.
 */
export async function sglangAppliesSeed(doFetch: typeof fetch, baseUrl: string, headers: Record<string, string>, timeoutMs: number): Promise<boolean | undefined> {
  try {
    const res = await doFetch(`${baseUrl}/get_server_info`, { method: 'GET', headers: { ...headers, accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) { await res.text().catch(() => ''); return res.status === 404 ? false : undefined; }
    const info = await res.json() as { enable_deterministic_inference?: unknown };
    return info.enable_deterministic_inference === true;
  } catch {
    return undefined; // no answer: ask again at the next seeded call
  }
}
