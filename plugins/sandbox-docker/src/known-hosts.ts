/**
 * OpenSSH's `known_hosts` as the ssh client reads it (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"),
 * for the host keys an `ssh://` Docker host may present: plain names and patterns (`*`, `?`,
 * `!` negation, comma lists), `[host]:port` for a port other than 22, hashed names
 * (`|1|salt|hmac-sha1`), and `@revoked` lines. `@cert-authority` lines are not supported
 * (they name a CA, not a host key) and are skipped.
 */
import { createHmac } from 'node:crypto';

/** The name of a host in known_hosts: `host`, or `[host]:port` for a port other than 22. */
export const knownHostsName = (host: string, port: number): string => (port === 22 ? host : `[${host}]:${port}`);

function hashedMatch(entry: string, name: string): boolean {
  const [, magic, salt, hash] = entry.split('|');
  if (magic !== '1' || !salt || !hash) return false;
  return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
}

function patternMatch(pattern: string, name: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
  return re.test(name);
}

/** Whether a comma list of host patterns matches `name` (a negated pattern that matches wins). */
function listMatches(list: string, name: string): boolean {
  let matched = false;
  for (const p of list.split(',')) {
    if (p.startsWith('|')) { if (hashedMatch(p, name)) matched = true; continue; }
    if (p.startsWith('!')) { if (patternMatch(p.slice(1), name)) return false; continue; }
    if (patternMatch(p, name)) matched = true;
  }
  return matched;
}

/** Host keys (base64 of the key blob, as the file writes them) listed for `host` at `port`, less any revoked. */
export function knownHostKeys(text: string, host: string, port: number): string[] {
  const name = knownHostsName(host, port);
  const keys: string[] = [];
  const revoked = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    let marker: string | undefined;
    if (fields[0]!.startsWith('@')) marker = fields.shift();
    const [hosts, , key] = fields;
    if (!hosts || !key) continue;
    if (marker === '@revoked') { revoked.add(key); continue; }
    if (marker !== undefined) continue; // @cert-authority
    if (listMatches(hosts, name)) keys.push(key);
  }
  return keys.filter((k) => !revoked.has(k));
}
