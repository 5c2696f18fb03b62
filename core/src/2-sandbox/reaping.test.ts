import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
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

describeIf(missing, 'processes the local sandbox leaves behind', () => {
  it('after `clawgym eval` in bubblewrap sandboxes with holders, no process is left for init to reap', () => {
    const dir = tempProject({
      'clawgym.config.mjs': `export default {
  harnesses: [{ use: 'agentloop' }], tasks: [{ use: 'builtin', options: { families: ['vocab-upper', 'shell'] } }],
  run: { concurrency: 2, rolloutTimeoutMs: 60000 },
};\n`,
    }, 'clawgym-reaping-');
    const r = spawnSync(PERL, ['-e', SUBREAPER, process.execPath, bin, 'eval', '--engine', 'oracle', '--limit', '4'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    expect(r.stderr).not.toMatch(/prctl|exec:/);
    const [first, ...orphans] = r.stdout.trim().split('\n');
    expect(first).toBe('rc 0');
    // Before: the spawner helper ("MainThread"), each holder ("perl") and the probe's bubblewrap init, as zombies.
    expect(orphans).toEqual([]);
  }, 240_000);
});
