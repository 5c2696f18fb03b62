import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { createKernel } from '../../run/create-kernel';
import { collectLock } from '../../run/lock/collect';
import { lockFileOf, readLock, writeLock } from '../../run/lock/file';
import { formatLock, LOCK_FILE, lockDifferences, valueDifferences } from '../../report/lock-diff';
import { ClawGymError, ErrorCodes } from '../../errors';

type CliIo = { out: (s: string) => void; cwd: string };

/**
 * `clawgym lock`: write `clawgym.lock.json` beside the config — every harness CLI's package,
 * version and integrity, the model files, the sandbox's image or root filesystem by content,
 * the packages, each task suite's content and the config's hash — and say what changed from the
 * lock that was there.
 */
export async function lockCommand(opts: { config?: string; json?: boolean }, io: CliIo): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config, { logger: { info: () => undefined, warn: () => undefined } });
  try {
    const lock = await collectLock(config, kernel, { runDir: resolve(config.rootDir, config.run.outDir, config.name) });
    const file = lockFileOf(config);
    const before = existsSync(file) ? await readLock(file, 'the config', '') : undefined;
    await writeLock(file, lock);
    if (opts.json) { io.out(`${JSON.stringify(lock, null, 2)}\n`); return; }
    const changes = before ? lockDifferences(before, lock) : [];
    io.out(`${formatLock(lock).join('\n')}\n\nwrote ${file}${before ? (changes.length ? `; changed from the lock that was there:\n${changes.map((c) => `  ${c}`).join('\n')}` : ' (unchanged)') : ''}\n`);
  } finally {
    await kernel.dispose();
  }
}

/** A run folder's frozen config (`config.json`). */
function runConfig(dir: string): unknown {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) throw new ClawGymError(ErrorCodes.USAGE, `${dir} is not a run folder (it has no config.json)`, { hint: 'Name run folders, e.g. clawgym diff runs/a runs/b' });
  const { rootDir: _r, configFile: _f, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return rest;
}

/**
 * `clawgym diff <runA> <runB>`: what differed between two runs — the config's options by path,
 * then their locks (harness CLIs, model files, sandbox, packages, tasks) — one line each.
 */
export async function diffCommand(a: string, b: string, opts: { json?: boolean }, io: CliIo): Promise<void> {
  const [dirA, dirB] = [resolve(io.cwd, a), resolve(io.cwd, b)];
  const config = valueDifferences(runConfig(dirA), runConfig(dirB)).map((d) => `config ${d}`);
  const hint = 'The run started before run locks existed: its folder has no clawgym.lock.json. Only the configs were compared.';
  const [lockA, lockB] = await Promise.all([dirA, dirB].map((d) => readLock(join(d, LOCK_FILE), `run ${d}`, hint)));
  const lock = lockDifferences(lockA!, lockB!, { config: false }).map((d) => `lock ${d}`);
  const all = [...config, ...lock];
  if (opts.json) { io.out(`${JSON.stringify({ a: dirA, b: dirB, config, lock }, null, 2)}\n`); return; }
  io.out(all.length ? `${all.join('\n')}\n` : `${a} and ${b} ran the same config with the same lock\n`);
}
