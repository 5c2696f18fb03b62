import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScriptedProxy } from '../testing';

// The package is an ES module with a CommonJS build: required, as jest runs this file as CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI } = require('@google/genai') as typeof import('@google/genai', { with: { 'resolution-mode': 'require' } });

// A wrong key: Google answers 400 INVALID_ARGUMENT with reason API_KEY_INVALID (the body below, as
// Gemini API users report it), the proxy 401 UNAUTHENTICATED. Whether that difference matters is
// up to the client: @google/genai (this devDependency) throws ApiError { status, message: the
// body as JSON } for any error status, and with retryOptions (which Gemini CLI does not set)
// retries only 408, 429 and 5xx and throws "Non-retryable exception <status text>" for the rest;
// Gemini CLI 0.61.0 retries only 429, 499 and 5xx (isRetryableError, 400 explicitly not;
// bundle/chunk-JDPZ4CE3.js) and gives 401 no meaning of its own for the model API (only for MCP
// servers). So both end the same way: one request, an error naming the status, no retry.
const GOOGLE_API_KEY_INVALID = {
  error: {
    code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT',
    details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }],
  },
};

/** A server that answers every request with one status and body, and counts the requests. */
async function fixedAnswer(status: number, body: unknown) {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => { res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }); res.end(JSON.stringify(body)); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** What generateContent throws (jest's module registry makes `instanceof ApiError` unreliable: read the fields). */
async function failure(baseUrl: string, apiKey: string, retry: boolean): Promise<{ name: string; status?: number; message: string }> {
  const client = new GoogleGenAI({ apiKey, httpOptions: { baseUrl, ...(retry ? { retryOptions: { attempts: 3 } } : {}) } });
  const err = await client.models.generateContent({ model: 'policy', contents: 'hi' }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(Object);
  return err as { name: string; status?: number; message: string };
}

describe('a wrong API key on the Gemini wire, as @google/genai sees it', () => {
  it("Google's 400 API_KEY_INVALID and the proxy's 401 UNAUTHENTICATED are handled alike: one request, an ApiError with the status, no retry", async () => {
    const google = await fixedAnswer(400, GOOGLE_API_KEY_INVALID);
    const p = await startScriptedProxy(() => ({ text: 'never' }));
    try {
      const session = p.proxy.openSession('gem-wrong-key');
      // As Gemini CLI builds its client (no retryOptions): an ApiError with the status and the body.
      const g = await failure(google.url, 'nope', false);
      expect(g).toMatchObject({ name: 'ApiError', status: 400 });
      expect(JSON.parse(g.message)).toEqual(GOOGLE_API_KEY_INVALID);
      const ours = await failure(session.baseUrl, 'nope', false);
      expect(ours).toMatchObject({ name: 'ApiError', status: 401 });
      expect(JSON.parse(ours.message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
      expect(google.requests()).toBe(1);
      // With retryOptions: neither status is retried; only the status text differs.
      expect((await failure(google.url, 'nope', true)).message).toBe('Non-retryable exception Bad Request sending request');
      expect((await failure(session.baseUrl, 'nope', true)).message).toBe('Non-retryable exception Unauthorized sending request');
      expect(google.requests()).toBe(2);
      // Nothing reached the engine, and no call was recorded.
      expect(p.records).toEqual([]);
    } finally {
      await p.close();
      await google.close();
    }
  });

  it('a status the SDK does retry (503) is retried with retryOptions: the counting server sees every attempt', async () => {
    // The control for the test above: the counter would show a retry if there were one.
    const busy = await fixedAnswer(503, { error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } });
    try {
      await failure(busy.url, 'k', true);
      expect(busy.requests()).toBe(3);
    } finally {
      await busy.close();
    }
  }, 30_000);
});
