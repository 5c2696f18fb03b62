import { join, resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { provider, slotName, slotOptions } from '../../kernel/create';
import { createKernel } from '../../run/create-kernel';
import { ServingProxy } from '../../proxy/server';
import { CallStore } from '../../rollout/call-store';
import { titoSummary } from '../../rollout/tito-stats';
import { onInterrupt } from '../interrupt';
import { countStart } from '../../util/starts';

export interface ServeOptions {
  config?: string;
  engine?: string;
  host?: string;
  port?: string;
  sessions?: string;
  name?: string;
}

/**
 * `clawgym serve`: the serving proxy with the configured engine, for pointing any harness at by
 * hand. Prints each session's base URLs and key; records calls under the run directory; stops
 * on SIGINT/SIGTERM (or `signal`) after flushing records.
 */
export async function serve(opts: ServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config);
  // `--engine X` where the config's engine is X keeps the config's options for it (scripted
  // replies, a model path); another name takes that engine with its defaults.
  const slot = opts.engine !== undefined && opts.engine !== slotName(config.engine) ? opts.engine : config.engine;
  const engine = await (await provider(kernel, 'engine', slot)).create(slotOptions(slot), { runDir: '', seed: config.run.seed, rootDir: config.rootDir });
  const name = opts.name ?? `serve-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  // A server restarted with the same --name gets session ids no earlier one used: it never
  // appends into their files (call indices would repeat and inspect would merge two servers).
  const start = await countStart(runDir, 'serves');
  const store = new CallStore(join(runDir, 'calls'));
  const proxy = new ServingProxy({
    engine, store, runId: name,
    host: opts.host ?? config.proxy.host,
    port: opts.port !== undefined ? Number(opts.port) : config.proxy.port,
    maxBodyBytes: config.proxy.maxBodyBytes, headersTimeoutMs: config.proxy.headersTimeoutMs, bodyTimeoutMs: config.proxy.bodyTimeoutMs,
    onRecord: (r) => kernel.hooks.onModelCall.promise(r),
    onNote: (id, note) => io.out(`note [${id}]: ${note}\n`),
  });
  const root = await proxy.start();
  const count = Math.max(1, Number(opts.sessions ?? 1));
  const lines = [`ClawGym serving proxy on ${root} (engine: ${engine.name}, template: ${engine.chatTemplate.name})`, `records: ${join(runDir, 'calls')}`, ''];
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const s = proxy.openSession(start === 1 ? `s-${i}` : `s${start}-${i}`);
    ids.push(s.rolloutId);
    lines.push(
      `session ${s.rolloutId}`,
      `  key                ${s.apiKey}`,
      `  Anthropic Messages ANTHROPIC_BASE_URL=${s.baseUrl} ANTHROPIC_API_KEY=${s.apiKey}`,
      `  OpenAI Chat        OPENAI_BASE_URL=${s.baseUrl}/v1 OPENAI_API_KEY=${s.apiKey}`,
      `  OpenAI Responses   base_url = "${s.baseUrl}/v1", wire_api = "responses"`,
      '',
    );
  }
  io.out(`${lines.join('\n')}Press Ctrl-C to stop.\n`);

  const stopped = new AbortController();
  const removeHandlers = onInterrupt(stopped, (s) => io.out(s));
  io.signal?.addEventListener('abort', () => stopped.abort(), { once: true });
  await new Promise<void>((done) => stopped.signal.addEventListener('abort', () => done(), { once: true }));
  removeHandlers();
  for (const id of ids) await proxy.closeSession(id);
  await proxy.stop();
  await kernel.dispose();
  // Heads only (no prompt ids), a line at a time: sessions of any size are summed up.
  const records = [];
  for (const id of ids) for await (const h of store.heads(id)) records.push({ ...h, outputIds: [], outputLogprobs: [] });
  io.out(`\nstopped. ${titoSummary(records)}\n`);
}
