import { createServer, request as httpRequest, type Server } from 'node:http';
import Ajv, { type ValidateFunction } from 'ajv';
import { loadContract, routeOf, type Contract, type ContractName, type ModelSchema } from '../contracts';

/**
 * Checks requests and answers against a contract of `contracts/` (written by
 * scripts/server-contracts from the server's source; engine-vllm's tests use it with theirs).
 * Stricter than the server where the server is lenient: a model whose server drops unknown fields
 * (`x-extra: ignore`, pydantic's default) or keeps them unread (`allow`, vLLM's, which logs them)
 * refuses them here, since such a field is one the client sends for nothing —
 * except the fields `tolerate`'s model of the same route or name has (what the Tinker SDK sends
 * SkyRL, which SkyRL is built to take).
 */
export class ContractCheck {
  readonly contract: Contract;
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(name: ContractName | Contract, tolerate?: ContractName | Contract) {
    this.contract = typeof name === 'string' ? loadContract(name) : name;
    const other = typeof tolerate === 'string' ? loadContract(tolerate) : tolerate;
    const definitions: Record<string, ModelSchema> = JSON.parse(JSON.stringify(this.contract.definitions));
    for (const [key, d] of Object.entries(definitions)) {
      if (d['x-extra'] === 'forbid') continue;
      d.additionalProperties = false;
      for (const extra of other ? toleratedFields(this.contract, other, key) : []) d.properties[extra] ??= {};
    }
    this.ajv.addSchema({ $id: 'contract', definitions });
  }

  private validator(model: string): ValidateFunction {
    let v = this.compiled.get(model);
    if (!v) { v = this.ajv.getSchema(`contract#/definitions/${model}`)!; this.compiled.set(model, v); }
    return v;
  }

  /** What is wrong with `value` as `model` (empty: nothing). */
  check(model: string, value: unknown): string[] {
    const v = this.validator(model);
    if (!v) return [`no model ${model} in ${this.contract['x-repository']}@${this.contract['x-commit']}`];
    return v(value) ? [] : (v.errors ?? []).map((e) => `${model}${e.instancePath} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
  }

  /** What is wrong with a request: its route, then its body against the route's model. */
  request(method: string, path: string, body: unknown): string[] {
    const r = routeOf(this.contract, method, path);
    if (!r) return [`${method} ${path}: no such route at ${this.contract['x-repository']}@${this.contract['x-commit'].slice(0, 9)}`];
    if (!r.body || method === 'GET') return [];
    return this.check(r.body, body).map((e) => `${method} ${path}: ${e}`);
  }
}

/** Fields of `other`'s model for the same route body (or of the same name) that `c`'s model lacks. */
function toleratedFields(c: Contract, other: Contract, key: string): string[] {
  const mine = Object.keys(c.definitions[key]?.properties ?? {});
  const theirs = new Set(Object.keys(other.definitions[key]?.properties ?? {}));
  for (const r of c.routes) {
    if (r.body !== key) continue;
    const o = other.routes.find((x) => x.path === r.path && x.methods.some((m) => r.methods.includes(m)));
    for (const f of Object.keys((o?.body && other.definitions[o.body]?.properties) || {})) theirs.add(f);
  }
  return [...theirs].filter((f) => !mine.includes(f));
}

/** What each training or sampling route's future resolves to in SkyRL (skyrl/tinker/types.py). */
export const FUTURE_OUTPUT: Record<string, string> = {
  '/api/v1/create_model': 'CreateModelOutput', '/api/v1/unload_model': 'UnloadModelOutput',
  '/api/v1/forward': 'ForwardBackwardOutput', '/api/v1/forward_backward': 'ForwardBackwardOutput',
  '/api/v1/optim_step': 'OptimStepOutput', '/api/v1/save_weights_for_sampler': 'SaveWeightsForSamplerOutput',
  '/api/v1/save_weights': 'SaveWeightsOutput', '/api/v1/load_weights': 'LoadWeightsOutput', '/api/v1/asample': 'SampleOutput',
};

export interface Exchange { method: string; path: string; body: unknown; status: number; answer: unknown }

/**
 * A forwarding proxy in front of a server that records every exchange; `fault` may drop an
 * answer after the server did the work (the client sees a broken connection), or answer 404
 * itself (a route the server hides).
 */
export async function recordingProxy(target: string, fault: (path: string, n: number) => 'pass' | 'drop-response' | 'not-found' = () => 'pass') {
  const seen: Exchange[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const what = fault(req.url ?? '', n++);
      if (what === 'not-found') { res.writeHead(404, { 'content-type': 'application/json' }); res.end('{"detail":"Not Found"}'); return; }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const h of ['x-api-key', 'authorization']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
      const up = httpRequest(`${target}${req.url}`, { method: req.method, headers }, (r) => {
        const out: Buffer[] = [];
        r.on('data', (c: Buffer) => out.push(c));
        r.on('end', () => {
          const answer = Buffer.concat(out);
          const parsed = (() => { try { return JSON.parse(answer.toString()); } catch { return answer.length; } })();
          seen.push({ method: req.method ?? 'GET', path: req.url ?? '', body: text ? JSON.parse(text) : undefined, status: r.statusCode ?? 0, answer: parsed });
          if (what === 'drop-response') { res.socket?.destroy(); return; }
          res.writeHead(r.statusCode ?? 500, r.headers);
          res.end(answer);
        });
      });
      up.end(text);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, seen, close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }) };
}

/**
 * Every problem of a recorded conversation against a contract: each request's route and body,
 * each 2xx answer against its route's response model, and each `retrieve_future` answer against
 * the output of the route that made the future.
 */
export function conversationProblems(check: ContractCheck, seen: readonly Exchange[], skip: (e: Exchange) => boolean = () => false): string[] {
  const problems: string[] = [];
  const futures = new Map<string, string>();
  for (const e of seen) {
    if (skip(e)) continue;
    const path = e.path.split('?')[0]!;
    problems.push(...check.request(e.method, e.path, e.body));
    if (e.status < 200 || e.status >= 300) continue;
    const r = routeOf(check.contract, e.method, path);
    const answer = e.answer as Record<string, unknown>;
    if (r?.response) problems.push(...check.check(r.response, answer).map((p) => `answer of ${path}: ${p}`));
    if (r?.response === 'FutureResponse' || (FUTURE_OUTPUT[path] && typeof answer?.request_id === 'string')) futures.set(String(answer.request_id), path);
    if (path === '/api/v1/retrieve_future') {
      const from = futures.get(String((e.body as { request_id?: unknown }).request_id));
      const model = from ? FUTURE_OUTPUT[from] : undefined;
      if (model) problems.push(...check.check(model, answer).map((p) => `result of ${from}: ${p}`));
    }
  }
  return problems;
}
