import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '../testing';
import { PERL } from './machine';

const bin = resolve(__dirname, '../../bin/clawgym.js');

/**
 * Runs a command as the child of a child subreaper (prctl PR_SET_CHILD_SUBREAPER, syscall 157 on
 * x86-64): every process the command leaves behind, finished or not, is then re-parented to it
 * instead of to init. After the command exits and a second has passed, it prints one line per
 * such orphan ("<pid> <state> <name>"), then kills and reaps them.
 */
const SUBREAPER = String.raw`
syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl: $!\n";
my $pid = fork(); if ($pid == 0) { open(STDOUT, '>', '/dev/null'); exec @ARGV or die "exec: $!\n" }
waitpid($pid, 0); my $rc = $? >> 8; select(undef, undef, undef, 1.0);
opendir(my $d, '/proc') or die; my @orphans;
for my $p (grep { /^\d+$/ } readdir $d) { open(my $s, '<', "/proc/$p/stat") or next; my $l = <$s>;
  my ($name) = $l =~ /\((.*)\)/; my @f = split / /, substr($l, rindex($l, ')') + 2);
  push @orphans, "$p $f[0] $name" if $f[1] == $$ }
print "rc $rc\n", map { "$_\n" } @orphans;
kill 'KILL', map { (split / /)[0] } @orphans; 1 while waitpid(-1, 0) > 0;`;

afterAll(removeTempProjects);

// The local sandbox's holder needs root (as in CI); without it no holder is started.
const missing = bubblewrapMissing() ?? (process.getuid?.() !== 0 ? 'the sandbox holder needs root' : undefined)
  ?? (existsSync(PERL) ? undefined : `perl is not at ${PERL}`);

// agentloop talks to the proxy's socket itself; every real CLI (bench:harness-overhead's) reaches
// it over TCP, through the holder's forwarder, one process per connection. The second harness is
// agentloop made to go that way.
const TCP_AGENTLOOP = `import { agentLoopHarness, agentLoopInvocation, AGENTLOOP_BIN } from '@clawgym/harness-agentloop';
import { harnessResult } from '@clawgym/core';
const viaTcp = { ...agentLoopHarness, name: 'agentloop-tcp', async run(ctx) {
  const inv = agentLoopInvocation({ ...ctx, sandbox: { ...ctx.sandbox, modelSocketPath: undefined } }, { maxTurns: 16, node: 'node', bin: AGENTLOOP_BIN });
  if (inv.env.CLAWGYM_MODEL_SOCKET) throw new Error('not over TCP');
  return harnessResult(await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal }));
} };
const plugin = { name: 'test:agentloop-tcp', apply(api) { api.provide.harness(viaTcp); } };
`;

describeIf(missing, 'processes the local sandbox leaves behind', () => {
  it.each([
    ['agentloop (the proxy socket)', '', "'agentloop'"],
    ['a harness over TCP through the forwarder, as the real CLIs', TCP_AGENTLOOP, "'agentloop-tcp'"],
  ])('after `clawgym eval` in bubblewrap sandboxes with holders, %s: no process is left for init to reap', (_what, preamble, harness) => {
    const dir = tempProject({
      'clawgym.config.mjs': `${preamble}export default {
  ${preamble ? 'plugins: [plugin], ' : ''}harnesses: [${harness}], tasks: [{ use: 'builtin', options: { families: ['vocab-upper', 'shell'] } }],
  run: { concurrency: 2, rolloutTimeoutMs: 60000 },
};\n`,
    }, 'clawgym-reaping-');
    const r = spawnSync(PERL, ['-e', SUBREAPER, process.execPath, bin, 'eval', '--engine', 'oracle', '--limit', '4'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    expect(r.stderr).not.toMatch(/prctl|exec:/);
    const [first, ...orphans] = r.stdout.trim().split('\n');
    expect(first).toBe('rc 0');
    // Before: the spawner helper ("MainThread"), each holder ("perl") and the probe's bubblewrap init, as zombies.
    expect(orphans).toEqual([]);
    // Every rollout ran (and passed): the harness really made its calls, over TCP for the second.
    const runs = readdirSync(join(dir, 'runs'));
    const evalJson = JSON.parse(readFileSync(join(dir, 'runs', runs[0]!, 'eval.json'), 'utf8')) as { rollouts: { pass: boolean | null; calls: number }[] };
    expect(evalJson.rollouts.map((x) => x.pass)).toEqual([true, true, true, true]);
    expect(Math.min(...evalJson.rollouts.map((x) => x.calls))).toBeGreaterThan(0);
  }, 240_000);
});
