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
