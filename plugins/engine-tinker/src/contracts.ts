import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The servers' contracts as `scripts/server-contracts` reads them from their sources: request and
 * response models as JSON Schema (`definitions`) and the route table, each file stamped with the
 * repository and commit it was read from (`contracts/*.json` of this package). The stand-in
 * serves a release's routes and drops the fields its models do not have, as pydantic does; the
 * tests validate the client's requests against them.
 */
export type ContractName = 'skyrl-main' | 'skyrl-v0.3.0' | 'tinker-sdk';

export interface ContractRoute {
  methods: string[];
  path: string;
  handler: string;
  source: string;
  body?: string;
  bodyOptional?: boolean;
  bodyParsedFromRequest?: boolean;
  /** The body's model is in a file the script did not read: named, not defined. */
  bodyUnresolved?: boolean;
  response?: string;
  encoding?: 'protobuf';
}

export interface ModelSchema {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: false;
  'x-extra': 'ignore' | 'forbid' | 'allow';
  'x-source': string;
  'x-validators'?: string[];
}

export interface Contract {
  'x-repository': string;
  'x-commit': string;
  'x-files': string[];
  routes: ContractRoute[];
  definitions: Record<string, ModelSchema>;
}

const cache = new Map<ContractName, Contract>();

/** A contract file of this package (`contracts/<name>.json`, beside `src` and `dist`). */
export function loadContract(name: ContractName): Contract {
  let c = cache.get(name);
  if (!c) {
    c = JSON.parse(readFileSync(join(__dirname, '..', 'contracts', `${name}.json`), 'utf8')) as Contract;
    cache.set(name, c);
  }
  return c;
}

/** The route of the table a request goes to: `{name}` matches one path segment, `{name:path}` the rest. */
export function routeOf(c: Contract, method: string, path: string): ContractRoute | undefined {
  const bare = path.split('?')[0]!;
  return c.routes.find((r) => r.methods.includes(method) && templateRegex(r.path).test(bare));
}

function templateRegex(template: string): RegExp {
  const parts = template.split(/(\{[^}]*\})/).map((p) => (p.startsWith('{') ? (p.endsWith(':path}') ? '.+' : '[^/]+') : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('')}$`);
}

/** A model's field names (`properties`). */
export function fieldsOf(c: Contract, model: string): string[] {
  return Object.keys(c.definitions[model]?.properties ?? {});
}

/**
 * The OpenAPI document FastAPI would serve for the contract (`GET /openapi.json`): each route's
 * body and answer models under `components.schemas`. A client reads from it what the server
 * takes, as it would from the real server's document.
 */
export function openapiOf(c: Contract): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<string>();
  for (const r of c.routes) {
    for (const m of r.methods) {
      const op: Record<string, unknown> = { operationId: r.handler };
      if (r.body && !r.bodyParsedFromRequest && !r.bodyUnresolved) { op.requestBody = { required: !r.bodyOptional, content: { 'application/json': { schema: ref(r.body) } } }; used.add(r.body); }
      if (r.response) { op.responses = { 200: { content: { 'application/json': { schema: ref(r.response) } } } }; used.add(r.response); }
      (paths[r.path.replace(/:path\}/g, '}')] ??= {})[m.toLowerCase()] = op;
    }
  }
  const schemas: Record<string, unknown> = {};
  const add = (name: string) => {
    if (schemas[name] || !c.definitions[name]) return;
    const text = JSON.stringify(c.definitions[name]).replace(/#\/definitions\//g, '#/components/schemas/');
    schemas[name] = JSON.parse(text);
    for (const m of text.matchAll(/#\/components\/schemas\/([^"]+)/g)) add(m[1]!);
  };
  for (const name of used) add(name);
  return { openapi: '3.1.0', info: { title: 'Tinker API Mock', version: '0.0.1', 'x-commit': c['x-commit'] }, paths, components: { schemas } };
}
