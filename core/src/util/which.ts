import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ProviderCheck } from '../contracts/check';

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
 * An install command that runs a script of ClawGym's repository (`bash scripts/install-harnesses.sh
 * pi`) where that script is (the repository); elsewhere (a project of one's own, which has no such
 * script) the CLI's npm package, installed into the project, where `cliCheck` looks for it.
 */
function installHere(install: string, cli: { name: string; packageName: string; packageVersion?: string }, reason: string): { reason: string; install: string } {
  const script = /^bash (scripts\/\S+)/.exec(install)?.[1];
  if (!script || existsSync(join(process.cwd(), script))) return { reason, install };
  const spec = cli.packageVersion ? `${cli.packageName}@${cli.packageVersion}` : cli.packageName;
  return { reason: `${cli.name} is not installed: its npm package ${cli.packageName} is not found from ${process.cwd()}`, install: `npm i -D ${spec}` };
}

/**
 * A CLI harness's check (`Harness.check`): its `bin` option where the config gives one — a path
 * must be an executable file, a bare name must be on PATH — else its npm package, resolved from
 * the current folder. `missing` is what to say (and how to install it) when the package is not
 * there; `binInstall` what to install when the given `bin` is not (default `missing.install`).
 * An install command naming a script of ClawGym's repository is offered only where that script is;
 * elsewhere the npm package is offered, at `packageVersion` when one is given (a CLI whose newest
 * release cannot be installed is pinned to the one that can, as the install script pins it).
 */
export function cliCheck(options: Record<string, unknown> | undefined, cli: { name: string; packageName: string; packageVersion?: string; missing: { reason: string; install: string }; binInstall?: string }): ProviderCheck {
  const bin = options?.bin;
  if (typeof bin === 'string' && bin !== '') {
    const found = bin.includes('/') ? (() => { try { accessSync(bin, constants.X_OK); return bin; } catch { return undefined; } })() : onPath(bin);
    const reason = `${cli.name}: bin ${JSON.stringify(bin)} ${bin.includes('/') ? 'is not an executable file' : 'is not on PATH'}`;
    return found ? { ok: true, reason: `${cli.name} at ${found}` }
      : { ok: false, reason, install: installHere(cli.binInstall ?? cli.missing.install, cli, reason).install };
  }
  try {
    require.resolve(`${cli.packageName}/package.json`, { paths: [process.cwd()] });
    return { ok: true };
  } catch {
    return { ok: false, ...installHere(cli.missing.install, cli, cli.missing.reason) };
  }
}
