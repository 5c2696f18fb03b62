import type { CanonicalConversation } from './contracts/messages';
import type { HarnessRunResult } from './contracts/harness';
import type { ExecResult } from './contracts/sandbox';
import { sep } from 'node:path';

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
