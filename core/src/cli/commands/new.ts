import { relative } from 'node:path';
import { CORE_VERSION } from '../../version';
import { newPlugin } from '../../scaffold/new-plugin';

/** What the command writes to, and where it runs. */
type CliIo = { out: (s: string) => void; cwd: string };

/** `clawgym new plugin --kind <kind> <name>`: a plugin package with a build, kit tests that pass, and its `provides` entry. */
export function newPluginCommand(name: string, opts: { kind: string; dir?: string }, io: CliIo): void {
  const made = newPlugin({ kind: opts.kind, name, cwd: io.cwd, dir: opts.dir, coreVersion: CORE_VERSION });
  const at = relative(io.cwd, made.dir) || '.';
  io.out(`Made ${made.packageName} (a ${opts.kind} plugin providing "${made.name}") in ${at}:\n${made.files.map((f) => `  ${f}`).join('\n')}\n\n`
    + `Next:\n  cd ${at} && npm install && npm test\n  then, in a ClawGym project: npm i -D ${relative(io.cwd, made.dir) ? `./${at}` : made.dir}\n`);
}
