import type { CanonicalConversation } from '../contracts/messages';
import type { CommandRunner, HarnessRunResult, OracleToolCall } from '../contracts/harness';
import type { ExecResult } from '../contracts/sandbox';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/**
 * The install folder of a CLI given by an absolute path inside an npm prefix — the folder above
 * its first `node_modules` — so a sandbox can bind the whole install read-only. Relative names
 * (found on PATH) need nothing.
 */
export function installRootOf(bin: string | undefined): string[] {
  if (!bin || !bin.startsWith('/')) return [];
  const i = bin.indexOf(`${sep}node_modules${sep}`);
  return [i > 0 ? bin.slice(0, i) : bin.slice(0, bin.lastIndexOf(sep))];
}

/** A harness result from its process's exit: the code, whether it timed out, the last 4 kB of output. */
export function harnessResult(r: ExecResult): HarnessRunResult {
  return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}\n${r.stderr}`.slice(-4000) };
}

/** The text of a conversation's leading system messages, joined (what classifiers read). */
export function systemText(conversation: CanonicalConversation): string {
  const out: string[] = [];
  for (const m of conversation.messages) {
    if (m.role !== 'system') break;
    for (const p of m.parts) if (p.type === 'text') out.push(p.text);
  }
  return out.join('\n');
}

/** The text of the last user message (what a harness appends for a compaction or summary call). */
export function lastUserText(conversation: CanonicalConversation): string {
  const m = [...conversation.messages].reverse().find((x) => x.role === 'user');
  return m ? m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
}

const VERSION = /\d+\.\d+\.\d+(?:[-.][0-9A-Za-z.]+)?/;

/**
 * A CLI's version: the first x.y.z its `--version` prints (`argv` is the command and its
 * arguments), run on the host with an empty HOME of its own so it writes nothing of the user's,
 * or by `run` where it is given (inside a sandbox); undefined when it fails or prints none
 * within 30 s.
 */
export async function cliVersion(argv: readonly string[], run?: CommandRunner): Promise<string | undefined> {
  if (run) {
    const r = await run(argv).catch(() => undefined);
    return r && r.exitCode === 0 ? VERSION.exec(`${r.stdout}\n${r.stderr}`)?.[0] : undefined;
  }
  const { execFile } = await import('node:child_process');
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const home = await mkdtemp(`${tmpdir()}${sep}clawgym-version-`);
  try {
    const out = await new Promise<string>((resolve) => {
      execFile(argv[0]!, argv.slice(1), { timeout: 30_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home }, encoding: 'utf8' },
        (err, stdout, stderr) => resolve(err ? '' : `${stdout}\n${stderr}`));
    });
    return VERSION.exec(out)?.[0];
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * The version of the npm package a CLI was installed from, read from the `package.json` of the
 * package that holds `bin` (links followed): undefined for a CLI outside `node_modules` (found on
 * PATH, built by hand) or a package that names none. Unlike {@link cliVersion} it starts nothing:
 * a Node CLI's `--version` is a whole start-up (16 s for Gemini CLI on a busy two-core machine),
 * which a rollout's records waited for when it outlasted the rollout.
 */
export function npmPackageVersion(bin: string | undefined): string | undefined {
  if (!bin || !bin.startsWith('/')) return undefined;
  let dir: string;
  try { dir = dirname(realpathSync(bin)); } catch { return undefined; }
  if (!dir.includes(`${sep}node_modules${sep}`)) return undefined;
  for (; dir.includes(`${sep}node_modules${sep}`) && !dir.endsWith(`${sep}node_modules`); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const p = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof p.name === 'string' && typeof p.version === 'string') return VERSION.exec(p.version)?.[0];
    } catch { return undefined; }
  }
  return undefined;
}

/**
 * An npm-installed CLI's version: its package's (see {@link npmPackageVersion}) where `bin` lies
 * in one and nothing runs it elsewhere, else what `argv` (`<cli> --version`) prints, as {@link cliVersion}.
 */
export async function installedCliVersion(bin: string | undefined, argv: readonly string[], run?: CommandRunner): Promise<string | undefined> {
  return (!run && npmPackageVersion(bin)) || cliVersion(argv, run);
}

/** A value as one word of a POSIX shell: single-quoted, each `'` inside closed, escaped and reopened. */
export const shellQuote = (v: unknown): string => `'${String(v).replace(/'/g, `'\\''`)}'`;

/** What each oracle call does, in words, for a shell tool that asks for a description or summary. */
export const ORACLE_CALL_PURPOSE: Readonly<Record<string, string>> = { read_file: 'Read the file', write_file: 'Write the file', list_files: 'List the files', bash: 'Run a command' };

/**
 * An oracle call (agentloop's `read_file`, `write_file`, `list_files`, `bash`) as the shell command
 * that does the same in the workspace — files read with `cat`, written with `printf`, listed with
 * `ls -1`, every value single-quoted — for a harness whose oracle plays through its shell tool.
 * Undefined for any other call.
 */
export function oracleShellCommand(call: OracleToolCall): string | undefined {
  const a = call.arguments;
  switch (call.name) {
    case 'read_file': return `cat -- ${shellQuote(a.path)}`;
    case 'write_file': return `printf '%s' ${shellQuote(a.content)} > ${shellQuote(a.path)}`;
    case 'list_files': return `ls -1 -- ${shellQuote(a.path ?? '.')}`;
    case 'bash': return a.command as string;
    default: return undefined;
  }
}
