/**
 * For the Docker tests: one chat call from inside a sandbox to its model URL, as a harness makes
 * it (Node's fetch, the session's key). It prints `<status> <reply text>`, or `failed <why>` and
 * exits 1.
 */
import type { ExecResult, Sandbox } from '@clawgym/core';

const SCRIPT = `fetch(process.env.BASE + '/v1/chat/completions', { method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.KEY },
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) })
  .then(async (r) => { const j = await r.json(); console.log(r.status, j.choices?.[0]?.message?.content ?? JSON.stringify(j)); })
  .catch((e) => { console.log('failed', e.cause?.code ?? e.message); process.exit(1); });`;

export function callModelFrom(sb: Sandbox, apiKey: string): Promise<ExecResult> {
  return sb.exec(['node', '-e', SCRIPT], { env: { BASE: sb.modelBaseUrl, KEY: apiKey }, timeoutMs: 20_000 });
}
