import { createHash } from 'node:crypto';
import type { CanonicalConversation, ToolSpec } from '../../contracts/messages';
import { stableJson } from '../../util/stable-json';
import { systemText } from '../helpers';
import type { HarnessFingerprint } from '../../contracts/harness';

export type { HarnessFingerprint } from '../../contracts/harness';

/** What a fingerprint is taken from: the first main call's system prompt and tools. */
export interface FingerprintSource {
  system: string;
  tools: readonly ToolSpec[];
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A prompt with what differs between rollouts of one harness release masked: the sandbox's
 * paths (workspace, HOME: per-rollout temp folders on some sandboxes) and dates (harnesses put
 * today's date in their prompts). Without this every rollout would look like a new release.
 */
export function maskRolloutText(text: string, paths: readonly string[] = []): string {
  let out = text;
  for (const p of [...paths].filter((x) => x.length > 1).sort((a, b) => b.length - a.length)) out = out.replace(new RegExp(escape(p), 'g'), '<path>');
  return out
    .replace(/\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?/g, '<date>')
    .replace(/\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,? (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2},? \d{4}/g, '<date>')
    // `Date.prototype.toDateString()`: "Sun Dec 06 2026" (OpenCode).
    .replace(/\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{4}\b/g, '<date>')
    .replace(/\b\d{1,2}\/\d{1,2}\/\d{4}\b/g, '<date>')
    // Claude Code's billing line ends its version with a short hash of the task's prompt
    // (`cc_version=2.1.332.b09`): the same CLI gives another per task.
    .replace(/(x-anthropic-billing-header: cc_version=\d+\.\d+\.\d+)\.[0-9a-f]+/g, '$1.<prompt>');
}

/** The source of a fingerprint from a request's canonical conversation. */
export function fingerprintSource(conversation: CanonicalConversation): FingerprintSource {
  return { system: systemText(conversation), tools: conversation.tools };
}

/** The fingerprint of a harness's first main call; `paths` are the sandbox paths to mask. */
export function fingerprintOf(source: FingerprintSource, harness: string, o: { cliVersion?: string; paths?: readonly string[] } = {}): HarnessFingerprint {
  const tools: Record<string, string> = {};
  for (const t of [...source.tools].sort((a, b) => a.name.localeCompare(b.name))) {
    tools[t.name] = hash(maskRolloutText(stableJson({ description: t.description ?? '', parameters: t.parameters }), o.paths));
  }
  return { harness, ...(o.cliVersion ? { cliVersion: o.cliVersion } : {}), system: hash(maskRolloutText(source.system, o.paths)), tools };
}

/** What changed from `before` to `after`, in words, one line each; empty when nothing did. */
export function fingerprintChanges(before: HarnessFingerprint, after: HarnessFingerprint): string[] {
  const changes: string[] = [];
  if (before.cliVersion !== after.cliVersion && before.cliVersion && after.cliVersion) changes.push(`CLI version ${before.cliVersion} → ${after.cliVersion}`);
  if (before.system !== after.system) changes.push(`system prompt changed (${before.system} → ${after.system})`);
  const added = Object.keys(after.tools).filter((n) => !(n in before.tools));
  const removed = Object.keys(before.tools).filter((n) => !(n in after.tools));
  const changed = Object.keys(after.tools).filter((n) => n in before.tools && before.tools[n] !== after.tools[n]);
  if (added.length) changes.push(`tools added: ${added.join(', ')}`);
  if (removed.length) changes.push(`tools removed: ${removed.join(', ')}`);
  if (changed.length) changes.push(`tool schemas changed: ${changed.join(', ')}`);
  return changes;
}

/** A fingerprint in a few lines, for `clawgym harness fingerprint`. */
export function formatFingerprint(f: HarnessFingerprint): string {
  const tools = Object.entries(f.tools);
  return [
    `harness      ${f.harness}`,
    `CLI version  ${f.cliVersion ?? 'unknown'}`,
    `system       ${f.system}`,
    `tools        ${tools.length}`,
    ...tools.map(([name, h]) => `  ${h}  ${name}`),
  ].join('\n');
}
