/**
 * One long-lived holder per bubblewrap sandbox: a bubblewrap whose process owns the sandbox's
 * namespaces (mount, pid, network, ipc, uts, cgroup, user) for the sandbox's whole life.
 * Commands do not start a bubblewrap each: they enter the holder's namespaces with `nsenter`
 * (its root and working folder too) and drop every capability with `setpriv` before running,
 * as `docker exec` enters a container. Killing the holder's pid 1 ends every process of the
 * sandbox at once (the kernel kills a pid namespace with its init).
 *
 * The model's loopback port: the holder is perl, which binds and listens on it at once (~2 ms)
 * and, when the first command that wants the TCP endpoint starts, exec's the Node forwarder on
 * that listening socket. A command that connects before Node is up waits in the listen backlog
 * instead of being refused, so no command waits for Node to start, and sandboxes whose commands
 * use the Unix socket only (`modelForwarder: false`) never start Node at all.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import { joinCgroups } from './cgroups';
import type { Finished, SpawnSpec, Started } from './collect';
import { NSENTER, PERL, SANDBOX_SCRIPTS, SETPRIV } from './machine';

/**
 * The holder (perl, no modules: starts in a few ms). `$^F` keeps the socket open across exec;
 * USR1 exec's the forwarder command (its arguments, then the socket's fd number).
 */
const HOLD_PL = [
  'BEGIN { $^F = 255 }',
  '$SIG{USR1} = sub { exec @ARGV[1 .. $#ARGV], fileno(S) or die "clawgym holder: exec $ARGV[1]: $!\\n" };',
  'socket(S, 2, 1, 0) or die "clawgym holder: socket: $!\\n";', // AF_INET, SOCK_STREAM
  'setsockopt(S, 1, 2, pack("i", 1));', // SOL_SOCKET, SO_REUSEADDR
  'bind(S, pack("S n C4 x8", 2, $ARGV[0], 127, 0, 0, 1)) or die "clawgym holder: bind: $!\\n";',
  'listen(S, 511) or die "clawgym holder: listen: $!\\n";',
  '$| = 1; print "ready\\n";',
  'sleep while 1;',
].join(' ');

/** The forwarder the holder becomes: the proxy's socket (as seen inside) from the listening fd. */
const FORWARD_JS = `require(${JSON.stringify(join(SANDBOX_SCRIPTS, 'forwarder.js'))}).startForwarder(process.argv[1], { fd: Number(process.argv[2]) })`;

export interface HolderSpec {
  /** bubblewrap and its arguments, up to (not including) `--`. */
  bwrap: string[];
  /** The holder's environment (markers and PATH: no secrets). */
  env: Record<string, string>;
  /** cgroups the holder joins (everything entering it is then counted there too). */
  cgroups: string[];
  /** Port of the model forwarder on the sandbox's loopback. */
  port: number;
  /** The proxy's Unix socket as seen inside. */
  socketInside: string;
  /** Node.js as seen inside. */
  node: string;
  /** How processes are started (the spawner helper). */
  start: (spec: SpawnSpec) => Started;
}

/** A started holder (see the file comment). */
export class Holder {
  /** The host pid of the sandbox's pid 1 (whose namespaces commands enter), once it is up. */
  readonly ready: Promise<number>;
  private readonly started: Started;
  private forwarding = false;
  private pid1?: number;
  private exited?: Finished;

  constructor(spec: HolderSpec) {
    const cmd = [...spec.bwrap, '--info-fd', '1', '--', PERL, '-e', HOLD_PL, String(spec.port), spec.node, '-e', FORWARD_JS, spec.socketInside];
    this.started = spec.start({ cmd: joinCgroups(spec.cgroups, cmd), env: spec.env, stdin: '', maxBytes: 64 * 1024, readyText: 'ready\n', unref: true });
    void this.started.done.then((f) => { this.exited = f; });
    this.ready = this.started.ready.then(async (out) => {
      const pid = out === undefined ? undefined : Number(/"child-pid":\s*(\d+)/.exec(out)?.[1]);
      if (!pid) {
        const f = await this.started.done;
        throw new ClawGymError(ErrorCodes.SANDBOX_GONE, `the sandbox's holder did not start (exit ${f.code ?? f.signal}): ${(f.error ?? f.stderr).trim().slice(0, 500)}`);
      }
      this.pid1 = pid;
      return pid;
    });
    this.ready.catch(() => undefined); // awaited by exec, which reports it
  }

  /** Why the holder is gone, when it is (it died, or the sandbox's wall limit killed it). */
  gone(): string | undefined {
    const f = this.exited;
    return f && `the sandbox's holder exited (${f.code ?? f.signal})${f.stderr ? `: ${f.stderr.trim().slice(0, 500)}` : ''}`;
  }

  /** Turn the holder into the model forwarder (once; connections made before wait in the backlog). */
  async forward(): Promise<void> {
    if (this.forwarding) return;
    this.forwarding = true;
    const pid1 = await this.ready;
    const holder = childOf(pid1);
    if (holder) try { process.kill(holder, 'SIGUSR1'); } catch { /* gone: the next command says so */ }
  }

  /** The command line that runs `argv` in the holder's namespaces, in `cwd` (inside), without capabilities. */
  async enter(argv: string[], cwd: string, holderCwd: string): Promise<string[]> {
    const pid1 = await this.ready;
    return [
      NSENTER, '-t', String(pid1), '-U', '-m', '-n', '-p', '-i', '-u', '-C', '-r', '-w',
      SETPRIV, '--bounding-set=-all', '--inh-caps=-all', '--no-new-privs', '--',
      ...(cwd === holderCwd ? [] : ['/usr/bin/env', '-C', cwd, '--']),
      ...argv,
    ];
  }

  /**
   * SIGKILL the sandbox's pid 1 (the kernel then kills every process in its pid namespace) and
   * bubblewrap outside it (a holder still starting dies with it: --die-with-parent); wait until
   * it is gone.
   */
  async kill(waitMs = 2000): Promise<void> {
    const pid = this.pid1;
    this.started.killed();
    if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    const outer = await this.started.pid;
    if (outer) try { process.kill(-outer, 'SIGKILL'); } catch { /* gone */ }
    let t: NodeJS.Timeout | undefined;
    await Promise.race([this.started.done, new Promise<void>((r) => { t = setTimeout(r, waitMs); })]);
    clearTimeout(t);
  }
}

/** The first child of `pid` (the holder under the sandbox's pid 1). */
function childOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch { return undefined; }
}
