/**
 * The `local` sandbox provider: bubblewrap where it is installed (a read-only system, a writable
 * workspace and HOME, every namespace unshared, the model reached through the proxy's Unix
 * socket), plain processes in labelled temp folders otherwise (network still isolated with
 * `unshare -n` where possible, and a loud warning about what is missing).
 *
 * The parts, a file each: machine detection (`machine.ts`), cgroups (`cgroups.ts`), process
 * marking (`marking.ts`) and sweep (`sweep.ts`), path mapping with the escape check
 * (`paths.ts`), spawn-and-collect (`collect.ts`, through the spawner helper, `spawner.ts`), the
 * per-sandbox holder (`holder.ts`), a sandbox before it runs and the warm pool of those
 * (`slot.ts`), and one sandbox (`local-sandbox.ts`).
 *
 * Limits: cgroups (v1 or v2) where this process can create them — pids, memory, CPU quota —
 * otherwise rlimits through `prlimit` (RLIMIT_NPROC, RLIMIT_AS, RLIMIT_CPU); wall time by
 * timers that kill everything the sandbox started.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SandboxProvider, SweepReport } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';
import { refuseEnvironment } from './environment';
import { checkId, createLocalSandbox } from './local-sandbox';
import { describeMachine, detectMachine, enforcementOf, fallbackWarning, type LimitEnforcement, type Machine } from './machine';
import { SlotPool } from './slot';
import { localIdentity } from './identity';
import { sweepSandboxes } from './sweep';

export { bubblewrapPath, enforcementHere, type LimitEnforcement } from './machine';
export { SANDBOX_MARKER_ENV } from './marking';
export { DEFAULT_PIDS_LIMIT, SANDBOX_HOME, SANDBOX_PROXY_SOCKET, SANDBOX_WORKSPACE } from './local-sandbox';

/** Default root of the labelled sandbox folders. */
export const DEFAULT_SANDBOX_ROOT = join(tmpdir(), 'clawgym-sandboxes');

export interface LocalSandboxOptions {
  /** Folder under which sandboxes live (`<root>/<runId>/<rolloutId>`); default {@link DEFAULT_SANDBOX_ROOT}. */
  root?: string;
  /** Use plain processes even where bubblewrap is installed. */
  forceFallback?: boolean;
  /** Where warnings go (default `console.warn`). */
  log?: (msg: string) => void;
  /** Enforce limits with cgroups where this process can create them (default true); false: rlimits only. */
  cgroups?: boolean;
  /**
   * One holder process per bubblewrap sandbox that commands enter (default true, where the
   * machine allows it: root, nsenter, setpriv, perl; see holder.ts). false: a bubblewrap per
   * command (each with its own Node forwarder for the model port).
   */
  holder?: boolean;
  /**
   * With holders: how many to keep started ahead per sandbox shape (run, model socket,
   * read-only paths, limited controllers), default 2; 0 starts each at its create(). A pooled
   * holder serves one sandbox and is never reused.
   */
  warmPool?: number;
  /**
   * Run sandboxes as plain processes where bubblewrap is missing (default false: refused). They
   * then share the host's filesystem — a sandboxed command can read and write whatever this
   * user can, other sandboxes' workspaces included — though, as root, each still gets its own
   * pid namespace, /proc and network.
   */
  allowUnisolated?: boolean;
  /**
   * A root filesystem folder (an image's: `scripts/openclaw-image.sh` builds the OpenClaw one)
   * whose /usr, /bin, /lib… and /etc sandboxes see instead of the host's, so rollouts run on the
   * image's system and CLIs as in its Docker container. bubblewrap only: refused without it.
   */
  rootfs?: string;
  /**
   * What one sandbox may write in all — workspace, HOME and (with bubblewrap) /tmp: a size such
   * as `'1g'` (the default) or `'512m'`, a number of MiB, or false/0 for no limit. Past it a
   * write fails with ENOSPC inside the sandbox; the host's disk is not touched. A size-limited
   * tmpfs per sandbox, mounted as root (see disk.ts); where it cannot be mounted the limit is
   * not enforced, and the provider says so (a warning, `limitEnforcement().disk`, doctor).
   */
  diskLimit?: string | number | false;
}

/** The `local` provider, plus what it can tell about its own enforcement. */
export interface LocalSandboxProvider extends SandboxProvider {
  /** How each limit is enforced on this machine. */
  limitEnforcement(): Promise<LimitEnforcement>;
  /** `bubblewrap`, or `fallback` (plain processes). */
  mode(): Promise<'bubblewrap' | 'fallback'>;
  /** Whether commands enter a per-sandbox holder (see `holder.ts`). */
  usesHolder(): Promise<boolean>;
  /** Wait until every destroyed sandbox's cgroups and folder are gone. */
  settled(): Promise<void>;
  /** Drop the warm pool's holders, then wait as {@link settled} does. */
  close(): Promise<void>;
}

/**
 * The `local` sandbox provider (see the file comment): bubblewrap where installed, plain
 * processes with a loud warning otherwise.
 */
export function localSandboxProvider(options: LocalSandboxOptions = {}): LocalSandboxProvider {
  const root = resolve(options.root ?? DEFAULT_SANDBOX_ROOT);
  // eslint-disable-next-line no-console
  const log = options.log ?? ((msg: string) => console.warn(msg));
  let machine: Promise<Machine> | undefined;
  let warned = false;
  const getMachine = () => (machine ??= detectMachine(options));
  const removals = new Set<Promise<unknown>>();
  const track = (removal: Promise<unknown>) => {
    const p = removal.catch(() => undefined).finally(() => removals.delete(p));
    removals.add(p);
  };
  const settled = async () => { while (removals.size) await Promise.all([...removals]); };
  let pool: SlotPool | undefined;
  const poolFor = (m: Machine) => (m.mode === 'bubblewrap' && m.holder ? (pool ??= new SlotPool(m, root, options.warmPool ?? 2, track)) : undefined);

  return {
    name: 'local',
    async describeIsolation() { return describeMachine(await getMachine()); },
    systemOf: () => (options.rootfs === undefined ? undefined : `root filesystem ${options.rootfs}`),
    identity: () => localIdentity(options.rootfs),
    async limitEnforcement() { return enforcementOf(await getMachine()); },
    async mode() { return (await getMachine()).mode; },
    async usesHolder() { return (await getMachine()).holder; },
    settled,
    async close() {
      pool?.close();
      await settled();
    },

    async create(spec) {
      refuseEnvironment(spec, 'local');
      const m = await getMachine();
      if (m.mode === 'fallback' && options.rootfs !== undefined) {
        throw new ClawGymError(ErrorCodes.SANDBOX_UNISOLATED, `the local sandbox runs on the root filesystem ${options.rootfs} only with bubblewrap, which cannot run here (${m.whyFallback})`, { hint: 'Install bubblewrap, use the docker sandbox with the image, or drop the rootfs option.' });
      }
      if (m.mode === 'fallback' && !options.allowUnisolated) {
        throw new ClawGymError(ErrorCodes.SANDBOX_UNISOLATED, `the local sandbox cannot isolate files here (${m.whyFallback}): a sandboxed harness could read and write the host's files and other sandboxes' workspaces`, {
          hint: 'Install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap; pacman -S bubblewrap), use the docker sandbox, or accept plain processes with sandbox: { use: \'local\', options: { allowUnisolated: true } }.',
        });
      }
      if (!warned) {
        warned = true;
        if (m.mode === 'fallback') log(fallbackWarning(m));
        const { pids, disk } = enforcementOf(m);
        if (pids.startsWith('not enforced')) log(`clawgym: local sandbox process limit ${pids}`);
        if (m.disk.bytes !== undefined && disk?.startsWith('not enforced')) log(`clawgym: local sandbox disk limit ${disk}`);
      }
      return createLocalSandbox(spec, m, root, track, poolFor(m));
    },

    async sweep(runId, scope) {
      if (runId !== undefined) checkId('runId', runId);
      await settled(); // this process's own removals are not leftovers
      return sweepSandboxes(root, runId, scope?.project) satisfies Promise<SweepReport>;
    },
  };
}
