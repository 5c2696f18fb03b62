import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../config/load';
import type { ModelCallRecord, RecordStore } from '../contracts/records';
import type { PluginApi } from '../contracts/plugin';
import { Tokens } from './tokens';
import type { ServingProxy } from '../4-proxy/server';
import { CallStore } from '../5-records/call-store';
import { composeRun } from './compose';

const repo = resolve(__dirname, '../../..');
const dirs: string[] = [];
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-compose-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A store that keeps records in memory: what a plugin might register to ship records elsewhere. */
class MemoryStore implements RecordStore {
  readonly dir = '(memory)';
  readonly records: ModelCallRecord[] = [];
  async append(r: ModelCallRecord) { this.records.push(r); }
  async read(id: string) { return this.records.filter((r) => r.rolloutId === id); }
  async close() {}
  async closeAll() {}
}

/** One chat call through a proxy session, as a harness would make it. */
async function oneCall(proxy: ServingProxy, rolloutId: string): Promise<number> {
  await proxy.start();
  const s = proxy.openSession(rolloutId);
  const res = await fetch(`${s.baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }),
  });
  await res.text();
  await proxy.closeSession(rolloutId);
  await proxy.stop();
  return res.status;
}

const config = (extra: object) => resolveConfig({ engine: 'scripted', tasks: [{ use: 'builtin', options: { families: ['write'] } }], ...extra }, { rootDir: repo });

describe('composeRun: the run container', () => {
  it('lets a plugin replace the call store: the proxy it composes records into the plugin\'s store', async () => {
    const memory = new MemoryStore();
    const runDir = tmp();
    const s = await composeRun({
      config: config({ plugins: [{ name: 'acme:memory-store', apply: (api: PluginApi) => api.container.register(Tokens.CallStore, { useValue: memory }) }] }),
      purpose: 'eval', name: 'compose-test', runDir, taskLimits: { test: 1 }, logger: { info: () => {}, warn: () => {} },
    });
    expect(await oneCall(s.container.resolve(Tokens.Proxy), 'r-1')).toBe(200);
    expect(memory.records.map((r) => [r.rolloutId, r.callIndex])).toEqual([['r-1', 0]]);
    expect(existsSync(join(runDir, 'calls'))).toBe(false);
    // An evaluation's scope resolves the same replacement.
    expect(s.scope(join(runDir, 'eval'), 'e').resolve(Tokens.CallStore)).toBe(memory);
    await s.dispose();
  });

  it('registers every service under its token; by default one CallStore per scope, in the scope\'s folder', async () => {
    const runDir = tmp();
    const s = await composeRun({ config: config({}), purpose: 'eval', name: 'compose-test', runDir, taskLimits: { test: 1 }, logger: { info: () => {}, warn: () => {} } });
    expect(s.container.resolve(Tokens.Engine)).toBe(s.engine);
    expect(s.container.resolve(Tokens.Sandboxes)).toBe(s.sandboxes);
    expect(s.container.resolve(Tokens.Tasks).test).toHaveLength(1);
    expect(s.container.resolve(Tokens.Reporters).map((r) => r.name)).toEqual(['metrics-jsonl', 'tensorboard', 'html']);
    expect(s.container.resolve(Tokens.Proxy)).toBe(s.container.resolve(Tokens.Proxy));
    const store = s.container.resolve(Tokens.CallStore);
    expect(store).toBeInstanceOf(CallStore);
    expect(store.dir).toBe(join(runDir, 'calls'));
    const scoped = s.scope(join(runDir, 'eval', 'step-0'), 'e').resolve(Tokens.CallStore);
    expect(scoped).not.toBe(store);
    expect(scoped.dir).toBe(join(runDir, 'eval', 'step-0', 'calls'));
    expect(await oneCall(s.container.resolve(Tokens.Proxy), 'r-2')).toBe(200);
    expect(readdirSync(join(runDir, 'calls'))).toEqual(['r-2.jsonl']);
    await s.dispose();
  });

  it('passes config.proxy to the run\'s proxy', async () => {
    const s = await composeRun({ config: config({ proxy: { maxBodyBytes: 64 } }), purpose: 'eval', name: 'compose-test', runDir: tmp(), taskLimits: {}, logger: { info: () => {}, warn: () => {} } });
    const proxy = s.container.resolve(Tokens.Proxy);
    await proxy.start();
    const session = proxy.openSession('big');
    const res = await fetch(`${session.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${session.apiKey}` }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(200) }] }) });
    expect(res.status).toBe(413);
    await proxy.stop();
    await s.dispose();
  });
});
