import { fieldsOf, loadContract, openapiOf, routeOf, type Contract, type ContractName } from '@clawgym/engine-tinker';
import { TinkerRequestError } from './server-rules';

/**
 * Which SkyRL release `clawgym trainer serve --as` reproduces, and the contract it was read from
 * (`contracts/*.json`, written by scripts/server-contracts from the release's own source).
 */
export const STAND_IN_RELEASES = { 'skyrl@main': 'skyrl-main', 'skyrl@0.3.0': 'skyrl-v0.3.0' } as const satisfies Record<string, ContractName>;
export type StandInRelease = keyof typeof STAND_IN_RELEASES;

/**
 * A release's routes and request models, as FastAPI and pydantic apply them: a route the release
 * does not have answers 404 `{"detail": "Not Found"}`; a body missing a required field of its
 * model answers 422; fields the model does not have are dropped before the request is handled
 * (pydantic's default `extra="ignore"`), so `--as skyrl@0.3.0` never sees a `seq_id` on a
 * training request and runs a retried one again, as that release does. Only the body's top-level
 * fields are checked here; the handlers check the rest. Without a release (the default) every
 * route of the stand-in is served as it is, and `/openapi.json` is SkyRL main's.
 */
export class ReleaseRules {
  readonly contract: Contract;

  constructor(readonly release?: StandInRelease) {
    this.contract = loadContract(STAND_IN_RELEASES[release ?? 'skyrl@main']);
  }

  /** The document FastAPI serves at `/openapi.json` for this release. */
  openapi(): Record<string, unknown> { return openapiOf(this.contract); }

  /** The body as the release's handler would see it, or the release's refusal. */
  admit(method: string, route: string, body: Record<string, unknown>): Record<string, unknown> {
    if (!this.release) return body;
    const r = routeOf(this.contract, method, route);
    if (!r) throw new TinkerRequestError(404, 'Not Found');
    if (!r.body || method === 'GET') return body;
    const model = this.contract.definitions[r.body];
    const missing = (model?.required ?? []).filter((k) => body[k] === undefined);
    if (missing.length) throw new TinkerRequestError(422, JSON.stringify(missing.map((k) => ({ type: 'missing', loc: ['body', k], msg: 'Field required' }))));
    const known = new Set(fieldsOf(this.contract, r.body));
    return Object.fromEntries(Object.entries(body).filter(([k]) => known.has(k)));
  }
}
