/**
 * One long-lived holder per bubblewrap sandbox: a small perl program that bubblewrap starts as
 * the sandbox's pid 1 (`--as-pid-1`), in every namespace of the sandbox, in its cgroups, with no
 * capabilities. It runs the sandbox's commands itself: the runner writes a request to its stdin
 * (argv, environment, working folder, stdin data: hex, never on a command line), the holder
 * forks, the child enters its own process group, takes pipes as stdin/stdout/stderr and exec's
 * the command; the holder streams the output back on its stdout and reports how it ended. So a
 * command costs a fork and an exec inside the sandbox — no bubblewrap, no cgroup attach (cgroup v1
 * attach waits for an RCU grace period: ~8 ms here under load), no Node.js start.
 *
 * Protections: as pid 1 of its pid namespace the holder cannot be killed or stopped from inside
 * (the kernel drops signals it has no handler for); it makes itself non-dumpable, so no sandboxed
 * process can open its pipes through /proc or ptrace it. When a command exits, the holder kills
 * what it left running — its process group, and every other process but the holder's own when no
 * other command runs (when some do, those marked as the command's) — as when each command had a
 * pid namespace of its own: nothing the agent leaves behind runs on into the verifier's commands.
 * Killing pid 1 (from the host) ends every process of the sandbox at once.
 *
 * It also serves the model's loopback port: it listens on 127.0.0.1:<port> before it says
 * `ready` and forwards each connection to the proxy's Unix socket (one child per connection,
 * which forks once more so that each direction is a plain blocking copy; a side's end of input is
 * passed on as a half-close).
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { ClawGymError, ErrorCodes } from '../errors';
import { joinCgroups } from './cgroups';
import type { Finished } from './collect';
import { PERL, PRCTL_SYSCALL } from './machine';
import { EXEC_MARKER_ENV } from './marking';
import { startChannel, type Channel } from './spawner';

/**
 * The holder. Arguments: port, proxy socket (inside), prctl's syscall number, the exec marker's
 * name. It waits for a line `go`, then says `ready`. Requests (one line, fields hex):
 * `R <id> <cwd> <stdin> <argc> <argv…> <envc> <env…>`, `K <id>` (SIGKILL its group). Replies: `P <id> <pid>`, `O|E <id> <hex>` (stdout, stderr),
 * `Q <id>` (it exited), `X <id> <code|-> <signal|->` (its pipes are closed: done).
 */
const HOLD_PL = String.raw`
my ($port, $sock, $prctl, $mark) = @ARGV;
syscall($prctl + 0, 4, 0, 0, 0, 0) == 0 or die "clawgym holder: PR_SET_DUMPABLE: $!\n";
$SIG{PIPE} = 'IGNORE';
$SIG{CHLD} = sub {};
socket(S, 2, 1, 0) or die "clawgym holder: socket: $!\n";
setsockopt(S, 1, 2, pack('i', 1));
bind(S, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) or die "clawgym holder: bind: $!\n";
listen(S, 511) or die "clawgym holder: listen: $!\n";
my (%cmd, %own, %recent);
my $in = '';
# A SIGCHLD while the write waits on a full channel fails it with EINTR (4; perl installs its
# handlers without SA_RESTART): write again. Any other failure means the runner is gone.
sub put { my $l = shift; my $o = 0; while ($o < length $l) { my $w = syswrite(STDOUT, $l, length($l) - $o, $o);
  if (!defined $w) { next if $! == 4; exit 0 } $o += $w } }
sub pump { my ($from, $to) = @_; my $b;
  while (1) { my $n = sysread($from, $b, 65536); last if !$n; my $o = 0;
    while ($o < $n) { my $w = syswrite($to, $b, $n - $o, $o); return unless defined $w; $o += $w } }
  shutdown($to, 1) }
sub forward { accept(my $c, S) or return; my $p = fork; return unless defined $p;
  if ($p) { $own{$p} = 1; return }
  close S; close STDIN; close STDOUT; $SIG{CHLD} = 'DEFAULT';
  my $u; socket($u, 1, 1, 0) && connect($u, pack('S Z*', 1, $sock)) or exit 1;
  my $q = fork; if (defined $q && $q == 0) { pump($c, $u); exit 0 }
  pump($u, $c); waitpid($q, 0) if $q; exit 0 }
sub run { my @f = @_; my $id = shift @f;
  my ($cwd, $stdin) = map { pack 'H*', $_ } splice(@f, 0, 2);
  my @argv = map { pack 'H*', $_ } splice(@f, 0, shift @f);
  my @env = map { pack 'H*', $_ } splice(@f, 0, shift @f);
  my ($or, $ow, $er, $ew, $ir, $iw);
  pipe($or, $ow) && pipe($er, $ew) && pipe($ir, $iw) or do { put("E $id " . unpack('H*', "clawgym: pipe: $!\n") . "\nX $id 127 -\n"); return };
  my $pid = fork;
  if (!defined $pid) { put("E $id " . unpack('H*', "clawgym: fork: $!\n") . "\nX $id 127 -\n"); return }
  if ($pid == 0) {
    setpgrp(0, 0);
    open(STDIN, '<&', $ir); open(STDOUT, '>&', $ow); open(STDERR, '>&', $ew);
    $SIG{PIPE} = 'DEFAULT'; $SIG{CHLD} = 'DEFAULT';
    %ENV = (); for (@env) { my ($k, $v) = split /=/, $_, 2; $ENV{$k} = $v }
    chdir $cwd or do { print STDERR "clawgym: cannot enter $cwd: $!\n"; exit 127 };
    exec { $argv[0] } @argv;
    print STDERR "clawgym: cannot run $argv[0]: $!\n"; exit 127 }
  close $ow; close $ew; close $ir;
  if (length $stdin) { my $w = fork;
    if (defined $w && $w == 0) { close STDIN; close STDOUT; $SIG{PIPE} = 'DEFAULT'; my $o = 0;
      while ($o < length $stdin) { my $n = syswrite($iw, $stdin, length($stdin) - $o, $o); last unless defined $n; $o += $n } exit 0 }
    $own{$w} = 1 if $w }
  close $iw;
  $cmd{$id} = { pid => $pid, out => $or, err => $er };
  put("P $id $pid\n") }
sub parent { open(my $s, '<', "/proc/$_[0]/stat") or return 0; my $l = <$s>; return (split / /, substr($l, rindex($l, ')') + 2))[1] }
sub strays { my $id = shift;
  my $alone = !grep { $_ ne $id && !defined $cmd{$_}{st} } keys %cmd;
  my %keep = %own; $keep{$_->{pid}} = 1 for grep { !defined $_->{st} } values %cmd;
  opendir(my $d, '/proc') or return;
  for my $p (grep { /^\d+$/ && $_ > 1 } readdir $d) {
    my ($q, $kept) = ($p, 0);
    for (1 .. 64) { last if $q <= 1; if ($keep{$q}) { $kept = 1; last } $q = parent($q) }
    next if $kept;
    if (!$alone) { open(my $e, '<', "/proc/$p/environ") or next; local $/; my $env = <$e> // '';
      next unless index("\0$env", "\0$mark=$id\0") >= 0 }
    kill 'KILL', $p } }
until ($in =~ s/^go\n//) { sysread(STDIN, my $b, 1 << 20) or exit 0; $in .= $b }
$| = 1; print "ready\n";
while (1) {
  my $rin = ''; vec($rin, 0, 1) = 1; vec($rin, fileno(S), 1) = 1;
  for my $c (values %cmd) { vec($rin, fileno($_), 1) = 1 for grep { defined } $c->{out}, $c->{err} }
  my $n = select(my $rout = $rin, undef, undef, (%cmd || %recent) ? 0.05 : undef);
  while ((my $p = waitpid(-1, 1)) > 0) {
    my ($id) = grep { $cmd{$_}{pid} == $p && !defined $cmd{$_}{st} } keys %cmd;
    if (!defined $id) { delete $own{$p}; next }
    @{$cmd{$id}}{'st', 'at'} = ($?, time); kill 'KILL', -$p; put("Q $id\n"); strays($id); $recent{$id} = time + 2 }
  # Scanned again for a second or two: a child caught mid-fork or mid-exec (its environ unreadable) escapes one scan.
  for my $id (keys %recent) { if (time > $recent{$id}) { delete $recent{$id} } else { strays($id) } }
  if ($n > 0) {
    if (vec($rout, 0, 1)) { my $r = sysread(STDIN, my $b, 1 << 20); exit 0 unless $r; $in .= $b }
    while ($in =~ s/^([^\n]*)\n//) { my @f = split / /, $1; my $op = shift @f;
      if ($op eq 'R') { run(@f) } elsif ($op eq 'K' && $cmd{$f[0]}) { kill 'KILL', -$cmd{$f[0]}{pid}, $cmd{$f[0]}{pid} } }
    forward() if vec($rout, fileno(S), 1);
    for my $id (keys %cmd) { for my $k ('out', 'err') { my $h = $cmd{$id}{$k};
      next unless defined $h && vec($rout, fileno($h), 1);
      if (sysread($h, my $b, 65536)) { put(($k eq 'out' ? 'O' : 'E') . " $id " . unpack('H*', $b) . "\n") } else { close $h; $cmd{$id}{$k} = undef } } } }
  for my $id (keys %cmd) { my $c = $cmd{$id}; next unless defined $c->{st};
    next if (defined $c->{out} || defined $c->{err}) && time - $c->{at} < 2;
    my $s = $c->{st}; put("X $id " . ($s & 127 ? '- ' . ($s & 127) : ($s >> 8) . ' -') . "\n"); delete $cmd{$id} } }
`;

export interface HolderSpec {
  /** bubblewrap and its arguments, up to (not including) `--`. */
  bwrap: string[];
  /** The holder's environment (PATH and LANG: no secrets). */
  env: Record<string, string>;
  /** cgroups the holder joins (everything it starts is then counted there too). */
  cgroups: string[];
  /** Port of the model forwarder on the sandbox's loopback. */
  port: number;
  /** The proxy's Unix socket as seen inside. */
  socketInside: string;
}

/** One command the holder runs. */
export interface HeldCommand {
  /** The command exited (what it left running is being killed; `done` follows when its pipes close). */
  exited: Promise<void>;
  done: Promise<Finished>;
  /** SIGKILL the command's process group. */
  kill(): void;
}

interface Running {
  out: Buffer[];
  err: Buffer[];
  outBytes: number;
  errBytes: number;
  maxBytes: number;
  exited: () => void;
  done: (f: Finished) => void;
}

/** Signal names by number (what a killed command's `signal` says). */
const NAMES = new Map<number, string>();
for (const [name, n] of Object.entries(constants.signals)) if (!NAMES.has(n)) NAMES.set(n, name); // SIGABRT before SIGIOT

/** A started holder (see the file comment). */
export class Holder {
  /** The host pid of the sandbox's pid 1 (the holder), once it is up. */
  readonly ready: Promise<number>;
  private readonly channel: Channel;
  private readonly commands = new Map<number, Running>();
  private pid1?: number;
  private exitedWith?: string;
  private stderr = '';
  private readonly closed: Promise<void>;

  constructor(spec: HolderSpec) {
    const cmd = [...spec.bwrap, '--as-pid-1', '--', PERL, '-e', HOLD_PL, String(spec.port), spec.socketInside, String(PRCTL_SYSCALL), EXEC_MARKER_ENV];
    // Started by the spawner helper, its stdin and stdout handed over: the command channel.
    this.channel = startChannel({ cmd: joinCgroups(spec.cgroups, cmd), env: spec.env });
    // The holder says nothing until it reads "go": what it wrote before its stdout was handed
    // over from the spawner helper would be read, and lost, there.
    void Promise.all([this.channel.stdin, this.channel.stdout]).then(([i, o]) => { i?.on('error', () => undefined); if (o) i?.write('go\n'); });
    let setReady!: (up: boolean) => void;
    const up = new Promise<boolean>((r) => { setReady = r; });
    this.closed = this.channel.done.then((f) => {
      this.exitedWith = f.error ?? String(f.code ?? f.signal);
      this.stderr = f.stderr;
      setReady(false);
      this.lost();
    });
    void this.channel.stdout.then((out) => {
      if (!out) { setReady(false); return; }
      let buffered = '';
      let said = false;
      out.setEncoding('latin1');
      out.on('error', () => undefined);
      out.on('data', (d: string) => {
        buffered += d;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!said) { said = line === 'ready'; setReady(said); continue; }
          this.reply(line);
        }
      });
      // The channel closed: the holder is gone (its exit status follows from the helper).
      out.on('close', () => { this.exitedWith ??= 'its channel closed'; setReady(false); this.lost(); });
    });
    this.ready = up.then(async (ok) => {
      // bubblewrap (the cgroup-joining shell exec's it) -> the holder, pid 1 of the new pid namespace.
      const outer = ok ? await this.channel.pid : undefined;
      const pid = outer ? childOf(outer) : undefined;
      if (!pid) {
        await this.closed;
        throw new ClawGymError(ErrorCodes.SANDBOX_GONE, `the sandbox's holder did not start (exit ${this.exitedWith}): ${this.stderr.trim().slice(0, 500)}`);
      }
      this.pid1 = pid;
      return pid;
    });
    this.ready.catch(() => undefined); // awaited by exec, which reports it
  }

  /** Why the holder is gone, when it is (it died, or the sandbox was killed). */
  gone(): string | undefined {
    return this.exitedWith === undefined ? undefined : `the sandbox's holder exited (${this.exitedWith})${this.stderr ? `: ${this.stderr.trim().slice(0, 500)}` : ''}`;
  }

  /**
   * Run `argv` in the sandbox (see the file comment); the holder must be ready. `id` (unique in
   * this holder) is the value of the exec marker in `env`: the holder knows the command's
   * processes by it when others run at the same time.
   */
  run(c: { id: number; argv: string[]; env: Record<string, string>; cwd: string; stdin: string; maxBytes: number }): HeldCommand {
    const id = c.id;
    let exited!: () => void;
    let done!: (f: Finished) => void;
    const r: Running = {
      out: [], err: [], outBytes: 0, errBytes: 0, maxBytes: c.maxBytes,
      exited: () => undefined, done: () => undefined,
    };
    const exitedP = new Promise<void>((res) => { exited = res; });
    const doneP = new Promise<Finished>((res) => { done = res; });
    r.exited = exited;
    r.done = (f) => { exited(); done(f); };
    if (this.exitedWith !== undefined) {
      r.done({ code: null, signal: 'SIGKILL', stdout: '', stderr: '', outBytes: 0, errBytes: 0 });
    } else {
      this.commands.set(id, r);
      const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');
      const env = Object.entries(c.env).map(([k, v]) => hex(`${k}=${v}`));
      const line = ['R', id, hex(c.cwd), hex(c.stdin), c.argv.length, ...c.argv.map(hex), env.length, ...env].join(' ');
      void this.channel.stdin.then((s) => s?.write(`${line}\n`));
    }
    return {
      exited: exitedP,
      done: doneP,
      kill: () => { if (this.commands.has(id) && this.exitedWith === undefined) void this.channel.stdin.then((s) => s?.write(`K ${id}\n`)); },
    };
  }

  private reply(line: string): void {
    const [op, idText, a, b] = line.split(' ');
    const r = this.commands.get(Number(idText));
    if (!r) return;
    if (op === 'O' || op === 'E') {
      const data = Buffer.from(a ?? '', 'hex');
      if (op === 'O') { r.outBytes += data.length; if (r.outBytes <= r.maxBytes) r.out.push(data); }
      else { r.errBytes += data.length; if (r.errBytes <= r.maxBytes) r.err.push(data); }
    } else if (op === 'Q') {
      r.exited();
    } else if (op === 'X') {
      this.commands.delete(Number(idText));
      const signal = b === undefined || b === '-' ? null : NAMES.get(Number(b)) ?? `SIG${b}`;
      r.done({ code: a === '-' ? null : Number(a), signal, stdout: Buffer.concat(r.out).toString('utf8'), stderr: Buffer.concat(r.err).toString('utf8'), outBytes: r.outBytes, errBytes: r.errBytes });
    }
  }

  /** The holder is gone: every command it ran ends as killed. */
  private lost(): void {
    for (const [id, r] of this.commands) {
      this.commands.delete(id);
      r.done({ code: null, signal: 'SIGKILL', stdout: Buffer.concat(r.out).toString('utf8'), stderr: Buffer.concat(r.err).toString('utf8'), outBytes: r.outBytes, errBytes: r.errBytes });
    }
  }

  /**
   * SIGKILL the holder, pid 1 of the sandbox (the kernel then kills every process in its pid
   * namespace), and wait until it is gone. bubblewrap outside it reaps it and exits by itself;
   * only if it has not within `reapMs` (or the holder never came up) is bubblewrap killed too (a
   * holder still starting dies with it: --die-with-parent). Killing both at once left the holder
   * dying after its parent: a zombie for init to reap.
   */
  async kill(waitMs = 2000, reapMs = 500): Promise<void> {
    const wait = (ms: number) => {
      let t: NodeJS.Timeout | undefined;
      return Promise.race([this.closed.then(() => true), new Promise<boolean>((r) => { t = setTimeout(() => r(false), ms); })]).finally(() => clearTimeout(t));
    };
    let gone = false;
    // A holder still starting (a pooled slot dropped at once) is let come up first: its pid 1 is then known.
    if (!this.pid1 && this.exitedWith === undefined) await Promise.race([this.ready.catch(() => undefined), wait(waitMs)]);
    if (this.pid1) {
      try { process.kill(this.pid1, 'SIGKILL'); } catch { /* gone */ }
      gone = await wait(Math.min(reapMs, waitMs));
    }
    if (gone) return;
    const outer = await this.channel.pid;
    if (outer) try { process.kill(-outer, 'SIGKILL'); } catch { /* gone */ }
    await wait(waitMs);
  }
}

/** The first child of `pid`. */
function childOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch { return undefined; }
}
