import type { RunLock } from '../contracts/lock';

/** `clawgym.lock.json`: beside the config (`clawgym lock`) and in each run folder. */
export const LOCK_FILE = 'clawgym.lock.json';

/** Leaves of a JSON value by their dotted path (`harnesses.pi.cli.version`), as text. */
export function flatten(value: unknown, prefix = '', out: Map<string, string> = new Map()): Map<string, string> {
  if (value !== null && typeof value === 'object' && !(Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object'))) {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) out.set(prefix, Array.isArray(value) ? '[]' : '{}');
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, JSON.stringify(value) ?? 'undefined');
  }
  return out;
}

/** A value for one line: hashes shortened to 12 digits. */
const shown = (v: string) => v.replace(/^"(?:sha256[:-])?([0-9a-f]{40,})"$/, (_m, hex: string) => hex.slice(0, 12)).replace(/^"(sha(?:256|512)-[A-Za-z0-9+/]{12})[A-Za-z0-9+/=]+"$/, '$1…');

/**
 * What differs between two JSON values, one line per leaf: `path: before → after`, `path: added
 * (value)`, `path: removed (was value)`. Keys in `skip` (and everything under them) are left out.
 */
export function valueDifferences(before: unknown, after: unknown, skip: (path: string) => boolean = () => false): string[] {
  const a = flatten(before);
  const b = flatten(after);
  const lines: string[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    if (skip(key)) continue;
    const x = a.get(key);
    const y = b.get(key);
    if (x === y) continue;
    if (x === undefined) lines.push(`${key}: added (${shown(y!)})`);
    else if (y === undefined) lines.push(`${key}: removed (was ${shown(x)})`);
    else lines.push(`${key}: ${shown(x)} → ${shown(y)}`);
  }
  return lines;
}

/**
 * What differs between two run locks, naming each difference. The time each was written never
 * counts; a harness's fingerprint counts only where both locks have one (it is known once a run
 * has seen the harness); `config: false` leaves the config's hash out (`clawgym diff` names the
 * options instead).
 */
export function lockDifferences(before: RunLock, after: RunLock, o: { config?: boolean } = {}): string[] {
  const unseen = new Set(Object.keys({ ...before.harnesses, ...after.harnesses }).filter((h) => !before.harnesses[h]?.fingerprint || !after.harnesses[h]?.fingerprint));
  return valueDifferences(before, after, (key) => key === 'createdAt' || (o.config === false && key === 'config')
    || (key.startsWith('harnesses.') && key.includes('.fingerprint') && unseen.has(key.split('.')[1]!)));
}

/** A lock in a few lines, for `clawgym lock` and the report. */
export function formatLock(lock: RunLock): string[] {
  const short = (h: string) => h.replace(/^sha256:/, '').slice(0, 12);
  const lines = [`config       ${short(lock.config)}`];
  for (const [name, h] of Object.entries(lock.harnesses)) {
    const cli = h.cli ? `${h.cli.package}@${h.cli.version}${h.cli.integrity ? ` ${h.cli.integrity.slice(0, 19)}…` : ''}` : h.version ? `version ${h.version}` : 'no separate CLI';
    const fp = h.fingerprint ? `, system ${h.fingerprint.system}, ${Object.keys(h.fingerprint.tools).length} tools` : '';
    lines.push(`harness      ${name}: ${cli} (from ${h.provider})${fp}`);
  }
  for (const [option, files] of Object.entries(lock.model)) lines.push(`model        ${option}: ${Object.entries(files).map(([f, h]) => `${f} ${short(h)}`).join(', ')}`);
  lines.push(`sandbox      ${lock.sandbox.name} (from ${lock.sandbox.provider})${lock.sandbox.kind ? `: ${lock.sandbox.kind} ${lock.sandbox.ref} ${short(lock.sandbox.digest ?? '')}` : ''}`);
  for (const [name, s] of Object.entries(lock.tasks)) lines.push(`tasks        ${name}: ${s.train} train, ${s.test} test, ${short(s.tasks)}${s.sources ? `; ${Object.entries(s.sources).map(([p, h]) => `${p} ${short(h)}`).join(', ')}` : ''}`);
  lines.push(`packages     ${Object.entries(lock.packages).map(([p, v]) => `${p}@${v}`).join(', ')}`);
  return lines;
}
