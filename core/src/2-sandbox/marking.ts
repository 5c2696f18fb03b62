/**
 * Process marking: every process of a local sandbox inherits `CLAWGYM_SANDBOX=<its host folder>`
 * (and each command `CLAWGYM_SANDBOX_EXEC=<its number>`), so what a sandbox started can be found
 * in /proc and killed even when it left its process group, its cgroup is missing, or the runner
 * that made it is gone.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Environment variable every sandboxed process inherits: the sandbox's host folder. */
export const SANDBOX_MARKER_ENV = 'CLAWGYM_SANDBOX';
/** Environment variable naming the command (its number in the sandbox) a process belongs to. */
export const EXEC_MARKER_ENV = 'CLAWGYM_SANDBOX_EXEC';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Processes whose environment holds `CLAWGYM_SANDBOX=<value>` with `match(value, env)`. */
export async function markedProcesses(match: (value: string, env: string[]) => boolean): Promise<{ pid: number; value: string }[]> {
  const out: { pid: number; value: string }[] = [];
  let entries: string[];
  try { entries = await readdir('/proc'); } catch { return out; }
  const prefix = `${SANDBOX_MARKER_ENV}=`;
  await Promise.all(entries.map(async (name) => {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return;
    let env: string[];
    try { env = (await readFile(`/proc/${pid}/environ`, 'latin1')).split('\0'); } catch { return; }
    const entry = env.find((e) => e.startsWith(prefix));
    if (entry && match(entry.slice(prefix.length), env)) out.push({ pid, value: entry.slice(prefix.length) });
  }));
  return out;
}

/** SIGKILL the marked processes `match` selects, a few rounds (they may be forking); returns their pids. */
export async function killMarked(match: (value: string, env: string[]) => boolean): Promise<number[]> {
  const killed: number[] = [];
  for (let round = 0; round < 5; round++) {
    const found = await markedProcesses(match);
    if (found.length === 0) break;
    for (const { pid } of found) { killed.push(pid); try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await sleep(20);
  }
  return [...new Set(killed)];
}

/**
 * SIGKILL a process group: `killed`, `gone` (no such group) or `denied` (not ours to signal:
 * a caller that must stop it then kills it from inside, by {@link namespacePid}).
 */
export function killGroup(pid: number): 'killed' | 'gone' | 'denied' {
  if (pid <= 0) return 'gone';
  try {
    process.kill(-pid, 'SIGKILL');
    return 'killed';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'denied' : 'gone';
  }
}

/** The pid of host process `pid` in its innermost pid namespace (a container's), if it runs. */
export function namespacePid(pid: number): number | undefined {
  let status: string;
  try { status = readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { return undefined; }
  const inner = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/).pop();
  return inner === undefined ? undefined : Number(inner);
}
