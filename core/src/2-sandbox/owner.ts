import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/** Who made a sandbox: the runner's pid, that pid's start time (pids are reused) and host. */
export interface OwnerStamp {
  pid: number;
  pidStart?: string;
  host: string;
}

/** The start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), if it runs. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch { return undefined; }
}

/** This process, as the owner of what it creates. */
export function ownerStamp(): OwnerStamp {
  return { pid: process.pid, pidStart: startTimeOf(process.pid), host: hostname() };
}

/**
 * Whether the owner still runs: the same pid with the same start time. An owner on another host
 * cannot be checked from here and counts as alive, so a sweep never removes what it cannot judge.
 */
export function ownerAlive(o: { pid?: number; pidStart?: string; host?: string }): boolean {
  if (o.host !== undefined && o.host !== hostname()) return true;
  if (o.pid === undefined || !Number.isInteger(o.pid)) return false;
  if (o.pid === process.pid) return true;
  const start = startTimeOf(o.pid);
  return start !== undefined && (o.pidStart === undefined || start === o.pidStart);
}

/** An owner record (an owner file's text, a container label) parsed; undefined when it is not JSON of an object. */
export function parseOwner<T extends object = Record<string, unknown>>(text: string | undefined): (T & Partial<OwnerStamp>) | undefined {
  if (!text) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as T & Partial<OwnerStamp> : undefined;
  } catch { return undefined; }
}

/** The owner file at `path` (what a sweep reads), or undefined when it is missing or unreadable. */
export async function readOwnerFile<T extends object = Record<string, unknown>>(path: string): Promise<(T & Partial<OwnerStamp>) | undefined> {
  return parseOwner<T>(await readFile(path, 'utf8').catch(() => undefined));
}

/** Write the owner file at `path`: `fields`, stamped with this process (or `stamp`) as the owner. */
export async function writeOwnerFile<T extends object>(path: string, fields: T, stamp: OwnerStamp = ownerStamp()): Promise<void> {
  await writeFile(path, JSON.stringify({ ...fields, ...stamp }));
}
