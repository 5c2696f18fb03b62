import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where a shell with this `PATH` finds `command`, or undefined: what `clawgym doctor` reports. */
export function onPath(command: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch { /* not here */ }
  }
  return undefined;
}

/**
 * A harness's `bin` option, checked: a path must be an executable file, a bare name must be on
 * PATH. Undefined when the option is not set (the harness then checks its default install).
 */
export function binCheck(options: Record<string, unknown> | undefined, what: string): { ok: boolean; reason: string } | undefined {
  const bin = options?.bin;
  if (typeof bin !== 'string' || bin === '') return undefined;
  const found = bin.includes('/') ? (() => { try { accessSync(bin, constants.X_OK); return bin; } catch { return undefined; } })() : onPath(bin);
  return found ? { ok: true, reason: `${what} at ${found}` } : { ok: false, reason: `${what}: bin ${JSON.stringify(bin)} ${bin.includes('/') ? 'is not an executable file' : 'is not on PATH'}` };
}
