import { ClawGymError, ErrorCodes } from '@clawgym/core';

/**
 * How a Tinker client authenticates, as the Tinker SDK does it
 * (thinking-machines-lab/tinker at e9a95e23ea2fd57a3819bfcdce271b26ad005b68:
 * `src/tinker/lib/internal_client_holder.py`, `lib/_jwt_auth.py`, `lib/_auth_token_provider.py`,
 * `resources/service.py`, `types/client_config_response.py`, `types/auth_token_response.py`).
 *
 * The SDK first asks `POST /api/v1/client/config {sdk_version}` with the API key. When the
 * answer's `pjwt_auth_enabled` is true it exchanges the key for a short-lived JWT
 * (`POST /api/v1/auth/token` with body `{}` → `{jwt}`) and sends that JWT instead of the key, in
 * the same `X-API-Key` header, renewing it 300 s before the JWT's `exp` (retrying every 60 s when
 * a renewal fails). Otherwise it sends the key itself.
 */
export const TINKER_SDK_AUTH_COMMIT = 'e9a95e23ea2fd57a3819bfcdce271b26ad005b68';

/** The SDK renews a JWT this long before it expires (`_REFRESH_BEFORE_EXPIRY_SECS`). */
export const JWT_REFRESH_BEFORE_MS = 300_000;
/** …and tries again after this long when a renewal failed (`_RETRY_DELAY_SECS`). */
export const JWT_RETRY_MS = 60_000;

/** The `exp` claim of a JWT, in ms since the epoch; undefined when it has none or is no JWT. */
export function jwtExpiry(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (!payload) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch { return undefined; }
}

/** One unauthenticated-by-default exchange with the service: the route's answer, or a thrown failure. */
export type AuthCall = (route: string, body: unknown, key: string) => Promise<{ status: number; json?: unknown }>;

/** What the server asked for: the key as it is, or JWTs from the exchange. */
type Mode = 'key' | 'jwt';

/**
 * The credential a request carries. Without an API key there is none (SkyRL's open server takes
 * none) and nothing is asked. With one, the server's client config decides, once: the key, or a
 * JWT from the exchange, renewed ahead of its expiry (checked before each request, so a run
 * that sleeps through the expiry renews before its next call rather than failing it).
 */
export class TinkerAuth {
  private mode?: Promise<Mode>;
  private jwt?: { token: string; expiresAt?: number };
  private renewing?: Promise<string>;
  private retryAt = 0;

  constructor(private readonly apiKey: string | undefined, private readonly call: AuthCall, private readonly now: () => number = Date.now) {}

  /** The value of `X-API-Key` for the next request; undefined without a key. */
  async credential(): Promise<string | undefined> {
    const key = this.apiKey;
    if (!key) return undefined;
    this.mode ??= this.config(key).catch((e) => { this.mode = undefined; throw e; });
    if ((await this.mode) === 'key') return key;
    const jwt = this.jwt;
    const t = this.now();
    if (jwt && (jwt.expiresAt === undefined || t < jwt.expiresAt - JWT_REFRESH_BEFORE_MS)) return jwt.token;
    // Still valid but due for renewal: renew, and keep using it while renewals fail.
    if (jwt && jwt.expiresAt !== undefined && t < jwt.expiresAt) {
      if (t < this.retryAt) return jwt.token;
      return this.renew(key).catch(() => { this.retryAt = this.now() + JWT_RETRY_MS; return jwt.token; });
    }
    return this.renew(key);
  }

  /** Whether requests carry a JWT from the exchange (after the first {@link credential}). */
  async exchanges(): Promise<boolean> { return this.apiKey !== undefined && (await this.mode) === 'jwt'; }

  /** Forget the JWT (the server refused it): the next {@link credential} exchanges the key again. */
  invalidate(): void { this.jwt = undefined; this.retryAt = 0; }

  /**
   * `client/config` with the key. A server without the route (404/405: SkyRL before its stub, a
   * proxy) has no flags, so the key is sent as before; any other refusal is the key's.
   */
  private async config(key: string): Promise<Mode> {
    const r = await this.call('/api/v1/client/config', { sdk_version: 'clawgym' }, key);
    if (r.status === 404 || r.status === 405) return 'key';
    if (r.status < 200 || r.status >= 300) throw new AuthRefused('/api/v1/client/config', r.status, r.json);
    const flags = r.json as { pjwt_auth_enabled?: unknown; credential_default_source?: unknown } | undefined;
    if (flags?.pjwt_auth_enabled !== true) return 'key';
    // The SDK then runs $TINKER_CREDENTIAL_CMD for the exchange's credential, unless the key is a
    // JWT already (resolve_auth_provider, lib/_auth_token_provider.py:81-106 @ d595dc2).
    if (flags.credential_default_source === 'credential_cmd' && !key.startsWith('eyJ')) throw credentialCmdRefused();
    return 'jwt';
  }

  /** One exchange at a time: concurrent requests wait for the same JWT. */
  private renew(key: string): Promise<string> {
    this.renewing ??= (async () => {
      try {
        const r = await this.call('/api/v1/auth/token', {}, key);
        const token = (r.json as { jwt?: unknown } | undefined)?.jwt;
        if (r.status < 200 || r.status >= 300 || typeof token !== 'string' || !token) throw new AuthRefused('/api/v1/auth/token', r.status, r.json);
        this.jwt = { token, expiresAt: jwtExpiry(token) };
        this.retryAt = 0;
        return token;
      } finally { this.renewing = undefined; }
    })();
    return this.renewing;
  }
}

/**
 * The service asks for a credential printed by a command (`credential_default_source:
 * "credential_cmd"` in its client config, thinking-machines-lab/tinker@d595dc2
 * src/tinker/lib/internal_client_holder.py:245); ClawGym runs no such command.
 */
function credentialCmdRefused(): ClawGymError {
  return new ClawGymError(ErrorCodes.TINKER_CREDENTIAL_CMD, 'the Tinker service wants its credential from a command (credential_default_source: "credential_cmd"), which ClawGym does not run; the API key alone is not accepted for the exchange', {
    hint: 'Run the command your organisation gives (the SDK\'s $TINKER_CREDENTIAL_CMD) and set its output, a JWT starting with eyJ, as trainer.options.apiKey / engine.options.apiKey; it is renewed only by running the command again.',
  });
}

/** The service refused the key at the config or exchange route. */
export class AuthRefused extends Error {
  constructor(readonly route: string, readonly status: number, readonly body: unknown) {
    super(`${route} answered HTTP ${status}: ${typeof body === 'object' && body && 'detail' in body ? String((body as { detail: unknown }).detail) : JSON.stringify(body ?? null).slice(0, 300)}`);
  }
}
