import { startScriptedProxy } from '../testing';

type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
beforeAll(async () => { p = await startScriptedProxy(() => ({ text: 'ok' })); });
afterAll(async () => { await p.close(); });

const formats = {
  anthropic: { path: '/v1/messages', maxName: 'max_tokens', body: (x: Record<string, unknown>) => ({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'x' }], ...x }) },
  chat: { path: '/v1/chat/completions', maxName: 'max_tokens', body: (x: Record<string, unknown>) => ({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...x }) },
  responses: { path: '/v1/responses', maxName: 'max_output_tokens', body: (x: Record<string, unknown>) => ({ model: 'm', input: 'x', ...x }) },
};

let n = 0;
async function post(format: keyof typeof formats, extra: Record<string, unknown>) {
  const f = formats[format];
  const s = p.proxy.openSession(`samp-${n++}`);
  const res = await fetch(`${s.baseUrl}${f.path}`, { method: 'POST', headers: { 'x-api-key': s.apiKey, authorization: `Bearer ${s.apiKey}` }, body: JSON.stringify(f.body(extra)) });
  const text = await res.text();
  return { status: res.status, json: res.headers.get('content-type') === 'application/json' ? JSON.parse(text) as Record<string, unknown> : text, records: await p.store.read(s.rolloutId) };
}

/** The error shape of each format, with the message it must carry. */
const errorShape = (format: keyof typeof formats, message: string) => (format === 'anthropic'
  ? { type: 'error', error: { type: 'invalid_request_error', message } }
  : { error: expect.objectContaining({ type: 'invalid_request_error', message }) });

describe('sampling values', () => {
  for (const format of Object.keys(formats) as (keyof typeof formats)[]) {
    const maxName = formats[format].maxName;
    const bad: [Record<string, unknown>, string][] = [
      [{ top_p: 0 }, 'top_p must be in (0, 1], got 0'],
      [{ top_p: -0.5 }, 'top_p must be in (0, 1], got -0.5'],
      [{ top_p: 1.5 }, 'top_p must be in (0, 1], got 1.5'],
      [{ temperature: -1 }, `temperature must be from 0 to ${format === 'anthropic' ? 1 : 2}, got -1`],
      [{ temperature: 1e308 }, `temperature must be from 0 to ${format === 'anthropic' ? 1 : 2}, got 1e+308`],
      [{ temperature: 2.5 }, `temperature must be from 0 to ${format === 'anthropic' ? 1 : 2}, got 2.5`],
      [{ [maxName]: 0 }, format === 'anthropic' ? 'max_tokens: field required (a positive integer)' : `${maxName} must be a whole number of at least 1, got 0`],
      [{ [maxName]: -5 }, format === 'anthropic' ? 'max_tokens: field required (a positive integer)' : `${maxName} must be a whole number of at least 1, got -5`],
      [{ [maxName]: 2.5 }, `${maxName} must be a whole number of at least 1, got 2.5`],
    ];
    for (const [extra, message] of bad) {
      it(`${format}: ${JSON.stringify(extra)} is a 400 in the format's error shape, streamed or not, and nothing is recorded`, async () => {
        for (const stream of [false, true]) {
          const r = await post(format, { ...extra, stream });
          expect(r.status).toBe(400);
          expect(r.json).toEqual(errorShape(format, message));
          expect(r.records).toEqual([]);
        }
      });
    }
    it(`${format}: the edges of the valid range are answered (top_p 1, temperature 0 and its highest, ${maxName} 1)`, async () => {
      const r = await post(format, { top_p: 1, temperature: 0, [maxName]: 1 });
      expect(r.status).toBe(200);
      expect(r.records).toHaveLength(1);
      expect((await post(format, { temperature: format === 'anthropic' ? 1 : 2 })).status).toBe(200);
    });
  }
});
