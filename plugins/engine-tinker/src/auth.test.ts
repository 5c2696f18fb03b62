import { createServer, type Server } from 'node:http';
import { ClawGymError } from '@clawgym/core';
import { JWT_REFRESH_BEFORE_MS, jwtExpiry, TINKER_SDK_AUTH_COMMIT } from './auth';
import { TinkerModel } from './client';
import { TinkerHttp } from './http';

/*
 * Hosted Tinker's key exchange and heartbeat, replayed as the Tinker SDK performs them at
 * thinking-machines-lab/tinker e9a95e23ea2fd57a3819bfcdce271b26ad005b68:
 * - src/tinker/lib/internal_client_holder.py: `_fetch_client_config` POSTs
 *   /api/v1/client/config with ClientConfigRequest {sdk_version} (types/client_config_request.py)
 *   and the key; when ClientConfigResponse.pjwt_auth_enabled (types/client_config_response.py,
 *   default false, unknown flags ignored) the holder's JwtAuthProvider exchanges the key before
 *   creating the session;
 * - src/tinker/resources/service.py `auth_token`: POST /api/v1/auth/token, body {} → AuthTokenResponse {jwt};
 * - src/tinker/lib/_auth_token_provider.py: every credential (key or JWT) goes in `X-API-Key`;
 * - src/tinker/lib/_jwt_auth.py: renewal at exp − 300 s (`_REFRESH_BEFORE_EXPIRY_SECS`), again
 *   60 s after a failed one (`_RETRY_DELAY_SECS`);
 * - `_session_heartbeat` (internal_client_holder.py) and service.py `session_heartbeat`: every
 *   10 s, POST /api/v1/session_heartbeat with SessionHeartbeatRequest {session_id, type:
 *   "session_heartbeat"} (model_dump with defaults), one try (max_retries=0), 10 s timeout;
 *   answer {type: "session_heartbeat"}.
 * Each exchange names the route, the body the SDK sends, and the credential it carries.
 */
const KEY = 'tml-0123456789abcdef';
const jwt = (exp: number, tag: string) => `${Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ exp, sub: tag })).toString('base64url')}.sig-${tag}`;

type Exchange = { method?: string; route: string; body?: unknown; credential: string | undefined; answer: { status?: number; body: unknown } };

async function replay(transcript: Exchange[]) {
  const seen: string[] = [];
  let at = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      const next = transcript[at++];
      const route = req.url ?? '';
      const credential = req.headers['x-api-key'] as string | undefined;
      const body = text ? JSON.parse(text) : undefined;
      seen.push(`${req.method} ${route} ${credential ?? '-'}`);
      let out = next?.answer ?? { status: 599, body: { detail: 'transcript over' } };
      if (!next || next.route !== route || (next.method ?? 'POST') !== req.method) out = { status: 599, body: { detail: `transcript expected ${next?.route}, got ${req.method} ${route}` } };
      else if (next.credential !== credential) out = { status: 599, body: { detail: `expected credential ${next.credential}, got ${credential}` } };
      else if (next.body !== undefined && JSON.stringify(next.body) !== JSON.stringify(body)) out = { status: 599, body: { detail: `expected body ${JSON.stringify(next.body)}, got ${text}` } };
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, seen, left: () => transcript.length - at, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

const retry = { attempts: 2, baseDelayMs: 5, maxDelayMs: 5, requestTimeoutMs: 5000, futureTimeoutMs: 5000 };
const healthz = (credential: string | undefined): Exchange => ({ method: 'GET', route: '/api/v1/healthz', credential, answer: { body: { status: 'ok' } } });
const config = (flags: Record<string, unknown>): Exchange => ({ route: '/api/v1/client/config', body: { sdk_version: 'clawgym' }, credential: KEY, answer: { body: flags } });

describe(`hosted Tinker's key exchange and heartbeat (Tinker SDK ${TINKER_SDK_AUTH_COMMIT.slice(0, 8)})`, () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of closers) await c(); });
  const start = async (t: Exchange[]) => { const r = await replay(t); closers.push(r.close); return r; };

  it('pjwt_auth_enabled: exchanges the key, sends the JWT in X-API-Key, heartbeats with it, renews 300 s before exp', async () => {
    let now = 1_800_000_000_000;
    const first = jwt(now / 1000 + 3600, 'first');
    const second = jwt(now / 1000 + 7200, 'second');
    expect(jwtExpiry(first)).toBe(now + 3600_000);
    const r = await start([
      // The flags as the SDK model reads them; a flag it does not know is ignored.
      config({ pjwt_auth_enabled: true, credential_default_source: 'api_key', sample_dispatch_bytes_semaphore_size: 10485760, inflight_response_bytes_semaphore_size: 52428800, some_future_flag: 1 }),
      { route: '/api/v1/auth/token', body: {}, credential: KEY, answer: { body: { jwt: first } } },
      { route: '/api/v1/create_session', credential: first, answer: { body: { type: 'create_session', info_message: null, warning_message: null, error_message: null, session_id: 'session_ab12cd34' } } },
      { route: '/api/v1/create_model', credential: first, answer: { body: { model_id: 'model_1', request_id: '1', status: 'pending' } } },
      { route: '/api/v1/retrieve_future', credential: first, answer: { body: { model_id: 'model_1', base_model: 'Qwen/Qwen3-30B-A3B' } } },
      { route: '/api/v1/session_heartbeat', body: { session_id: 'session_ab12cd34', type: 'session_heartbeat' }, credential: first, answer: { body: { type: 'session_heartbeat' } } },
      // 301 s before exp: still the first JWT.
      { route: '/api/v1/session_heartbeat', credential: first, answer: { body: { type: 'session_heartbeat' } } },
      // 299 s before exp: renewed first, then sent.
      { route: '/api/v1/auth/token', body: {}, credential: KEY, answer: { body: { jwt: second } } },
      { route: '/api/v1/session_heartbeat', credential: second, answer: { body: { type: 'session_heartbeat' } } },
    ]);
    const http = new TinkerHttp(r.url, KEY, retry, fetch, () => now);
    const model = await TinkerModel.create(http, { baseModel: 'Qwen/Qwen3-30B-A3B', loraRank: 32, backend: 'tinker' });
    await model.heartbeat();
    now = 1_800_000_000_000 + 3600_000 - JWT_REFRESH_BEFORE_MS - 1000;
    await model.heartbeat();
    now += 2000;
    await model.heartbeat();
    expect(r.left()).toBe(0);
    expect(r.seen.filter((s) => s.includes('auth/token'))).toHaveLength(2);
  });

  it('a failed renewal keeps the still-valid JWT and tries again 60 s later', async () => {
    let now = 1_800_000_000_000;
    const first = jwt(now / 1000 + 600, 'first');
    const second = jwt(now / 1000 + 4000, 'second');
    const r = await start([
      config({ pjwt_auth_enabled: true }),
      { route: '/api/v1/auth/token', credential: KEY, answer: { body: { jwt: first } } },
      healthz(first),
      // inside the last 300 s: the renewal fails (the SDK logs and retries in 60 s), the old JWT still goes out
      { route: '/api/v1/auth/token', credential: KEY, answer: { status: 503, body: { detail: 'busy' } } },
      { route: '/api/v1/auth/token', credential: KEY, answer: { status: 503, body: { detail: 'busy' } } },
      healthz(first),
      healthz(first), // 30 s later: no new try yet
      { route: '/api/v1/auth/token', credential: KEY, answer: { body: { jwt: second } } }, // 60 s later
      healthz(second),
    ]);
    const http = new TinkerHttp(r.url, KEY, retry, fetch, () => now);
    await http.get('/api/v1/healthz');
    now += 400_000;
    await http.get('/api/v1/healthz');
    now += 30_000;
    await http.get('/api/v1/healthz');
    now += 31_000;
    await http.get('/api/v1/healthz');
    expect(r.left()).toBe(0);
  });

  it('without the flag (SkyRL\'s stub answers {pjwt_auth_enabled: false}) the key itself is sent, and nothing is exchanged', async () => {
    const r = await start([config({ pjwt_auth_enabled: false }), healthz(KEY), healthz(KEY)]);
    const http = new TinkerHttp(r.url, KEY, retry);
    await http.get('/api/v1/healthz');
    await http.get('/api/v1/healthz');
    expect(r.left()).toBe(0);
  });

  it('a server without the config route (404) gets the key as before; without a key nothing is asked', async () => {
    const r = await start([{ ...config({}), answer: { status: 404, body: { detail: 'Not Found' } } }, healthz(KEY)]);
    await new TinkerHttp(r.url, KEY, retry).get('/api/v1/healthz');
    expect(r.left()).toBe(0);
    const open = await start([healthz(undefined)]);
    await new TinkerHttp(open.url, undefined, retry).get('/api/v1/healthz');
    expect(open.left()).toBe(0);
  });

  it('a refused key stops at the exchange with an error naming the key option', async () => {
    const r = await start([config({ pjwt_auth_enabled: true }), { route: '/api/v1/auth/token', credential: KEY, answer: { status: 401, body: { detail: 'Invalid API key' } } }]);
    const err = await new TinkerHttp(r.url, KEY, retry).get('/api/v1/healthz').catch((e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.message).toMatch(/refused the API key: \/api\/v1\/auth\/token answered HTTP 401: Invalid API key/);
    expect(err.hint).toMatch(/apiKey/);
  });

  it('a JWT the server stops taking (401) is exchanged again once, and the request repeated', async () => {
    const now = 1_800_000_000_000;
    const first = jwt(now / 1000 + 3600, 'first');
    const second = jwt(now / 1000 + 3600, 'second');
    const r = await start([
      config({ pjwt_auth_enabled: true }),
      { route: '/api/v1/auth/token', credential: KEY, answer: { body: { jwt: first } } },
      { ...healthz(first), answer: { status: 401, body: { detail: 'JWT revoked' } } },
      { route: '/api/v1/auth/token', credential: KEY, answer: { body: { jwt: second } } },
      healthz(second),
    ]);
    await new TinkerHttp(r.url, KEY, retry, fetch, () => now).get('/api/v1/healthz');
    expect(r.left()).toBe(0);
  });
});

/*
 * `credential_default_source: "credential_cmd"` (thinking-machines-lab/tinker@d595dc2
 * src/tinker/types/client_config_response.py, lib/internal_client_holder.py:245): the SDK then runs
 * $TINKER_CREDENTIAL_CMD for the exchange's credential, unless the key given is a JWT already
 * (lib/_auth_token_provider.py:81-106, `resolve_auth_provider`). ClawGym runs no command.
 */
describe('a service that wants its credential from a command (credential_cmd)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of closers) await c(); });

  it('is refused with CLAWGYM_TINKER_CREDENTIAL_CMD before any exchange, naming what to give instead', async () => {
    const r = await replay([config({ pjwt_auth_enabled: true, credential_default_source: 'credential_cmd' })]);
    closers.push(r.close);
    const err = await new TinkerHttp(r.url, KEY, retry).get('/api/v1/healthz').catch((e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.code).toBe('CLAWGYM_TINKER_CREDENTIAL_CMD');
    expect(err.hint).toMatch(/a JWT starting with eyJ, as trainer.options.apiKey/);
    expect(r.seen).toEqual([`POST /api/v1/client/config ${KEY}`]);
  });

  it('takes a JWT given as the key, as the SDK does, and exchanges it', async () => {
    const given = jwt(2_000_000_000, 'given');
    const issued = jwt(2_000_000_000, 'issued');
    const r = await replay([
      { route: '/api/v1/client/config', body: { sdk_version: 'clawgym' }, credential: given, answer: { body: { pjwt_auth_enabled: true, credential_default_source: 'credential_cmd' } } },
      { route: '/api/v1/auth/token', body: {}, credential: given, answer: { body: { jwt: issued } } },
      healthz(issued),
    ]);
    closers.push(r.close);
    await expect(new TinkerHttp(r.url, given, retry, fetch, () => 1_900_000_000_000).get('/api/v1/healthz')).resolves.toEqual({ status: 'ok' });
    expect(r.left()).toBe(0);
  });
});
