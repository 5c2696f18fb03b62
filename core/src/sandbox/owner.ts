import { readFileSync } from 'node:fs';
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
