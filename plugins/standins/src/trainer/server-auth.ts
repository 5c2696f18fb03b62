import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ClawGymError, ErrorCodes } from '@clawgym/core';

/** How the Tinker stand-in authenticates (`clawgym trainer serve --api-key K [--jwt-auth]`). */
export interface StandInAuthOptions {
  /** The one API key it takes; without it every request is taken, as SkyRL's open server does. */
  apiKey?: string;
  /** Hosted Tinker's JWT exchange: `client/config` says `pjwt_auth_enabled`, and only JWTs from `auth/token` are taken. */
  jwt?: boolean;
  /** Lifetime of a JWT it issues, in seconds (default 3600). */
  jwtTtlSeconds?: number;
  /** Its clock, in ms (tests move it). */
  now?: () => number;
}

/** A refusal: the status and the `{detail}` text. */
export class AuthRejection extends Error {
  constructor(readonly status: number, detail: string) { super(detail); }
}

const b64 = (x: string | Buffer) => Buffer.from(x).toString('base64url');

/**
 * The stand-in's side of the key exchange the Tinker SDK performs (tinker @ e9a95e23,
 * `lib/internal_client_holder.py`): `POST /api/v1/client/config` answers the flags
 * (`pjwt_auth_enabled` false, as SkyRL's stub at a9564572 answers, unless `jwt`);
 * `POST /api/v1/auth/token` with the key answers `{jwt}` (a JWT signed by this process, `exp`
 * set). With `jwt` on, every other route takes only an unexpired JWT it issued: the key itself
 * is refused with 401, as a server that asked for the exchange would (the SDK never sends the
 * key there once the flag is set).
 */
export class StandInAuth {
  private readonly secret = randomBytes(32);
  /** JWTs issued (tests count the exchanges). */
  issued = 0;

  constructor(private readonly o: StandInAuthOptions = {}) {
    if (o.jwt && !o.apiKey) throw new ClawGymError(ErrorCodes.USAGE, 'the JWT exchange needs an API key to exchange', { hint: 'Give the stand-in an API key (--api-key) along with --jwt.' });
  }

  private now(): number { return (this.o.now ?? Date.now)(); }

  private isKey(sent: string | undefined): boolean {
    const key = this.o.apiKey;
    if (!key || !sent) return false;
    const a = Buffer.from(sent), b = Buffer.from(key);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** The routes of the exchange itself, answered here; undefined for every other route. */
  exchangeRoute(method: string, route: string, sent: string | undefined): unknown {
    if (method !== 'POST') return undefined;
    if (route === '/api/v1/client/config') {
      if (this.o.apiKey && !this.isKey(sent)) throw new AuthRejection(401, 'Invalid API key');
      return { pjwt_auth_enabled: this.o.jwt === true };
    }
    if (route === '/api/v1/auth/token') {
      if (!this.o.jwt) throw new AuthRejection(404, 'Not Found'); // SkyRL has no such route
      if (!this.isKey(sent)) throw new AuthRejection(401, 'Invalid API key');
      return { jwt: this.mint() };
    }
    return undefined;
  }

  /** Refuse a request whose credential this server does not take. */
  admit(sent: string | undefined): void {
    if (!this.o.apiKey) return;
    if (!this.o.jwt) {
      if (!this.isKey(sent)) throw new AuthRejection(401, sent ? 'Invalid API key' : 'Missing X-API-Key header');
      return;
    }
    if (this.isKey(sent)) throw new AuthRejection(401, 'This server takes a JWT from POST /api/v1/auth/token (client/config says pjwt_auth_enabled), not the API key');
    const why = this.verify(sent);
    if (why) throw new AuthRejection(401, why);
  }

  private mint(): string {
    this.issued++;
    const iat = Math.floor(this.now() / 1000);
    const head = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const body = b64(JSON.stringify({ sub: 'clawgym-stand-in', iat, exp: iat + (this.o.jwtTtlSeconds ?? 3600), jti: randomBytes(6).toString('hex') }));
    return `${head}.${body}.${this.sign(`${head}.${body}`)}`;
  }

  private sign(text: string): string { return createHmac('sha256', this.secret).update(text).digest('base64url'); }

  /** Why a credential is not a valid JWT of this server; undefined when it is. */
  private verify(sent: string | undefined): string | undefined {
    if (!sent) return 'Missing X-API-Key header';
    const [head, body, sig] = sent.split('.');
    if (!head || !body || !sig || this.sign(`${head}.${body}`) !== sig) return 'Invalid JWT';
    const { exp } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { exp: number };
    return this.now() / 1000 >= exp ? 'JWT expired' : undefined;
  }
}
