import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testModel } from '@clawgym/model-hf/testing';
import { startScriptedProxy } from '../testing';

type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
beforeAll(async () => { p = await startScriptedProxy(() => ({ text: 'read it' })); });
afterAll(async () => { await p.close(); });

/** A tool result of `size` bytes, as each wire format carries one. */
function bodyFor(format: 'anthropic' | 'chat' | 'responses', size: number): { path: string; body: string } {
  const content = 'abcdefghij\n'.repeat(Math.ceil(size / 11)).slice(0, size);
  if (format === 'anthropic') {
    return { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 16, messages: [
      { role: 'user', content: 'read the file' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'big.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
    ] }) };
  }
  if (format === 'chat') {
    return { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', max_tokens: 16, messages: [
      { role: 'user', content: 'read the file' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"big.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content },
    ] }) };
  }
  return { path: '/v1/responses', body: JSON.stringify({ model: 'm', max_output_tokens: 16, input: [
    { role: 'user', content: 'read the file' },
    { type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"path":"big.txt"}' },
    { type: 'function_call_output', call_id: 'call_1', output: content },
  ] }) };
}

describe('large tool results', () => {
  for (const format of ['anthropic', 'chat', 'responses'] as const) {
    for (const size of [130 * 1024, 1024 * 1024, 10 * 1024 * 1024]) {
      it(`${format}: a ${size}-byte tool result is answered and recorded`, async () => {
        const id = `big-${format}-${size}`;
        const s = p.proxy.openSession(id);
        const { path, body } = bodyFor(format, size);
        const res = await fetch(`${s.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': s.apiKey, authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' }, body });
        const text = await res.text();
        expect({ status: res.status, text: text.slice(0, 300) }).toMatchObject({ status: 200 });
        expect(text).toContain('read it');
        const [rec] = await p.store.read(id);
        expect(rec!.promptIds.length).toBeGreaterThan(size);
      }, 60_000);
    }
  }

  it('a body just under the 32 MB limit is answered, and its memory stays bounded', async () => {
    const { status, growth } = await nearLimit(p, 'near-limit');
    expect(status).toBe(200);
    // Byte-level ids are one 4-byte id a byte of text, and twice that while the render is joined
    // (7x the body on their own): measured 6-9x; 24x before ids were typed arrays and records
    // were written in pieces.
    expect(growth).toBeLessThan(12);
  }, 120_000);
});

/**
 * Send a body just under the 32 MB limit (a 28 MB tool result) from another process, so that
 * only the proxy's memory is measured; the peak RSS growth of this process, in bodies.
 */
async function nearLimit(q: P, id: string): Promise<{ status: number; growth: number }> {
  const s = q.proxy.openSession(id);
  const { path, body } = bodyFor('anthropic', 28 * 1024 * 1024);
  const size = Buffer.byteLength(body);
  expect(size).toBeGreaterThan(30 * 1024 * 1024);
  expect(size).toBeLessThan(32 * 1024 * 1024);
  const dir = await mkdtemp(join(tmpdir(), 'clawgym-big-'));
  try {
    await writeFile(join(dir, 'body.json'), body);
    const client = `fetch(${JSON.stringify(`${s.baseUrl}${path}`)}, { method: 'POST', headers: { 'x-api-key': ${JSON.stringify(s.apiKey)} }, body: require('fs').readFileSync(${JSON.stringify(join(dir, 'body.json'))}) }).then(async (r) => { await r.text(); process.stdout.write(String(r.status)); })`;
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    try {
      const out = await new Promise<string>((resolve, reject) => execFile(process.execPath, ['-e', client], { timeout: 100_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))));
      return { status: Number(out), growth: (peak - before) / size };
    } finally {
      clearInterval(sample);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('large tool results with a real tokenizer and template (Qwen3)', () => {
  it('a body just under the 32 MB limit is answered, and its memory stays a few times the body', async () => {
    const q = await startScriptedProxy(() => ({ text: 'read it' }), { template: testModel('qwen3') });
    try {
      const { status, growth } = await nearLimit(q, 'qwen-near-limit');
      expect(status).toBe(200);
      // Measured ~4x; 18x before long text was pre-tokenized in parts (a string per piece at once).
      expect(growth).toBeLessThan(7);
    } finally {
      await q.close();
    }
  }, 120_000);

  it('a 1 MB tool result is answered and recorded in each format', async () => {
    const q = await startScriptedProxy(() => ({ text: 'read it' }), { template: testModel('qwen3') });
    try {
      for (const format of ['anthropic', 'chat', 'responses'] as const) {
        const s = q.proxy.openSession(`qwen-big-${format}`);
        const { path, body } = bodyFor(format, 1024 * 1024);
        const res = await fetch(`${s.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': s.apiKey, authorization: `Bearer ${s.apiKey}` }, body });
        const text = await res.text();
        expect({ format, status: res.status, text: res.status === 200 ? '' : text.slice(0, 200) }).toEqual({ format, status: 200, text: '' });
        expect((await q.store.read(s.rolloutId))[0]!.promptIds.length).toBeGreaterThan(100_000);
      }
    } finally {
      await q.close();
    }
  }, 120_000);
});
