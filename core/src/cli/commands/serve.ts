import { join, resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { slotName, type SlotRef } from '../../kernel/create';
import type { ResolvedConfig } from '../../config/schema';
import { lockRunDir } from '../../run/lock';
import { composeRun } from '../../run/compose';
import { CallStore } from '../../5-records/call-store';
import { Tokens } from '../../run/tokens';
import { titoSummary } from '../../5-records/tito-stats';
import { untilStopped } from '../interrupt';
import { countStart } from '../../util/starts';
import { describeWriteFailure, isWriteFailure } from '../../util/write-failure';
import { messageOf } from '../../errors';

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
  // `--engine X` where the config's engine is X keeps the config's options for it (scripted
  // replies, a model path); another name takes that engine with its defaults.
  const slot = opts.engine !== undefined && opts.engine !== slotName(config.engine) ? opts.engine : config.engine;
  const name = opts.name ?? `serve-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  // One process a run folder: a second `serve --name` of the same name is refused.
  const lock = await lockRunDir(runDir, 'serve', io.out);
  try {
    await serveLocked(opts, io, { config, slot, name, runDir });
  } finally {
    await lock.release();
  }
}

async function serveLocked(opts: ServeOptions, io: { out: (s: string) => void; signal?: AbortSignal }, r: { config: ResolvedConfig; slot: SlotRef; name: string; runDir: string }): Promise<void> {
  const { config, slot, name, runDir } = r;
  // A server restarted with the same --name gets session ids no earlier one used: it never
  // appends into their files (call indices would repeat and inspect would merge two servers).
  const start = await countStart(runDir, 'serves');
  // The proxy, its engine and its store as every command composes them (a plugin's replacement included).
  const s = await composeRun({ config, purpose: 'serve', name, runDir, engine: slot });
  s.container.register(Tokens.ProxySettings, { useValue: {
    host: opts.host ?? config.proxy.host,
    port: opts.port !== undefined ? Number(opts.port) : config.proxy.port,
    onNote: (id: string, note: string) => io.out(`note [${id}]: ${note}\n`),
  } });
  const proxy = s.container.resolve(Tokens.Proxy);
  const store = s.container.resolve(Tokens.CallStore);
  const engine = s.engine!;
  // A call that cannot be recorded is answered with an error; say why, once, where the user looks.
  let warned = false;
  if (store instanceof CallStore) store.onWriteFailure((err) => {
    if (!warned) io.out(`warning: ${describeWriteFailure(err, runDir)}; calls that cannot be recorded are answered with an error\n`);
    warned = true;
  });
  const root = await proxy.start();
  const count = Math.max(1, Number(opts.sessions ?? 1));
  const lines = [`ClawGym serving proxy on ${root} (engine: ${engine.name}, template: ${engine.chatTemplate.name})`, `records: ${join(runDir, 'calls')}`, ''];
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const session = proxy.openSession(start === 1 ? `s-${i}` : `s${start}-${i}`);
    ids.push(session.rolloutId);
    lines.push(
      `session ${session.rolloutId}`,
      `  key                ${session.apiKey}`,
      `  Anthropic Messages ANTHROPIC_BASE_URL=${session.baseUrl} ANTHROPIC_API_KEY=${session.apiKey}`,
      `  OpenAI Chat        OPENAI_BASE_URL=${session.baseUrl}/v1 OPENAI_API_KEY=${session.apiKey}`,
      `  OpenAI Responses   base_url = "${session.baseUrl}/v1", wire_api = "responses"`,
      '',
    );
  }
  const stopped = untilStopped(io);
  io.out(`${lines.join('\n')}Press Ctrl-C to stop.\n`);
  await stopped;
  let answered = 0;
  for (const id of ids) {
    await proxy.closeSession(id).catch(() => undefined);
    answered += proxy.answeredCalls(id);
  }
  await proxy.stop().catch((err: unknown) => io.out(`warning: ${isWriteFailure(err) ? describeWriteFailure(err, runDir) : messageOf(err)}\n`));
  await s.dispose();
  // Heads only (no prompt ids), a line at a time: sessions of any size are summed up.
  const records = [];
  for (const id of ids) {
    // A store of a plugin's own may not stream heads: then it is read whole.
    if (store instanceof CallStore) for await (const h of store.heads(id)) records.push({ ...h, outputIds: [], outputLogprobs: [] });
    else records.push(...await store.read(id));
  }
  // Answered and recorded differ only where records could not be written (those calls got an error).
  io.out(`\nstopped. ${titoSummary(records)}\n${answered} calls answered, ${records.length} recorded${answered > records.length ? ` (${answered - records.length} records lost: ${runDir} was removed or could not be written)` : ''}\n`);
}
