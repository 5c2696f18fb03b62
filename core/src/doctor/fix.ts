import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/** What `clawgym doctor --fix` did with one install command. */
export interface FixStep {
  command: string;
  /** `ran` (exit 0), `failed` (the exit code is in `detail`), or `manual`: it needs root, and the `sudo` line is in `detail`. */
  result: 'ran' | 'failed' | 'manual';
  detail?: string;
}

const aptLists = '/var/lib/apt/lists';
const aptListsEmpty = () => { try { return !readdirSync(aptLists).some((f) => f.endsWith('_Packages')); } catch { return true; } };

/**
 * Run the install commands the doctor printed, in the config's folder. System packages
 * (`apt-get …`) install only as root (after `apt-get update` when the machine has never read
 * the package lists, as on a fresh image); otherwise the exact `sudo` line is returned for the
 * user to type, and nothing runs on their behalf.
 */
export function runFixes(commands: readonly string[], o: { cwd: string; log: (s: string) => void; root?: boolean }): FixStep[] {
  const root = o.root ?? process.getuid?.() === 0;
  const steps: FixStep[] = [];
  let updated = false;
  for (const command of commands) {
    const apt = /^apt-get\s/.test(command);
    if (apt && !root) { steps.push({ command, result: 'manual', detail: `sudo ${command}` }); continue; }
    const run = (c: string) => {
      o.log(`$ ${c}\n`);
      return spawnSync('sh', ['-c', c], { cwd: o.cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...(apt ? { DEBIAN_FRONTEND: 'noninteractive' } : {}) } });
    };
    if (apt && !updated && aptListsEmpty()) { run('apt-get update -qq'); updated = true; }
    const done = run(command);
    steps.push(done.status === 0 ? { command, result: 'ran' } : { command, result: 'failed', detail: done.error ? done.error.message : `exit ${done.status ?? done.signal}` });
  }
  return steps;
}
