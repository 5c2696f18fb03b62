import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ScriptContext, ScriptedTurn } from '../4-proxy/engine/scripted';
import { CallStore } from '../5-records/call-store';
import { startScriptedProxy } from '../testing';
import { titoStats, titoSummary } from '../5-records/tito-stats';
import { serve } from './commands/serve';
import { main } from './main';

const bin = resolve(__dirname, '../../bin/clawgym.js');
const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

// The first call of `flaky` sessions fails once (the harness re-sends it); `down` sessions always fail.
function script({ sessionId, callIndex }: ScriptContext): ScriptedTurn {
  if (sessionId.startsWith('down')) return { failBefore: 'engine down' };
  if (sessionId.startsWith('flaky') && callIndex === 0) return { failBefore: 'engine hiccup' };
  return { text: `answer ${callIndex}` };
}

describe('honest TITO reporting of failed and retried calls', () => {
  type P = Awaited<ReturnType<typeof startScriptedProxy>>;
  let p: P;
  let runDir: string;
  beforeAll(async () => { runDir = tmp('clawgym-report-'); p = await startScriptedProxy(script, { runDir, maxConsecutiveFailures: 5 }); });
  afterAll(async () => { await p.close(); });
  const post = async (id: string, messages: unknown[]) => {
    const key = p.proxy.sessions.get(id)?.key ?? p.proxy.openSession(id).apiKey;
    return (await fetch(`${p.url}/s/${id}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 64, messages }) })).status;
  };

  it('a re-sent failed first call is a retry of it, not "fork: first call of the session"; reuse stays 100%', async () => {
    const first = [{ role: 'user', content: 'go' }];
    expect(await post('flaky-1', first)).toBe(500);
    expect(await post('flaky-1', first)).toBe(200);
    expect(await post('flaky-1', [...first, { role: 'assistant', content: 'answer 1' }, { role: 'user', content: 'more' }])).toBe(200);
    const records = await p.store.read('flaky-1');
    expect(records.map((r) => r.origin.kind)).toEqual(['fork', 'retry', 'reuse']);
    expect(records[1]!.origin).toEqual({ kind: 'retry', of: 0 });
    const s = titoStats(records);
    expect(s).toMatchObject({ retry: 1, forks: 0, reuse: 1, rate: 1, failed: 1, failedRollouts: [] });
    expect(titoSummary(records)).toBe('3 calls; TITO reuse 100.0% (1/1 main calls after the first; 1 retry; 1 failed)');
  });

  it('a session whose calls all failed is reported as failed, by the summary and by inspect', async () => {
    for (let i = 0; i < 3; i++) await post('down-1', [{ role: 'user', content: 'go' }]);
    await p.proxy.closeSession('down-1');
    await p.proxy.closeSession('flaky-1');
    const records = await p.store.read('down-1');
    expect(records.map((r) => r.origin.kind)).toEqual(['fork', 'retry', 'retry']);
    expect(titoSummary(records)).toBe('3 calls; TITO reuse n/a (every call failed) (0/0 main calls after the first; 2 retries; 3 failed); failed: down-1');
    let out = '';
    const io = { out: (s: string) => { out += s; }, err: (s: string) => { out += s; }, cwd: runDir };
    expect(await main(['inspect', runDir], io)).toBe(0);
    expect(out).toMatch(/^down-1\s+3\s+n\/a\s+2\s+0\s+0\s+all 3\s+\d+\/\d+\/\d+\s+0$/m);
    expect(out).toMatch(/^flaky-1\s+3\s+100\.0%\s+1\s+0\s+0\s+1\s+\d+\/\d+\/\d+\s+\d+$/m);
    out = '';
    expect(await main(['inspect', runDir, '--rollout', 'down-1'], io)).toBe(0);
    expect(out).toContain('outcome infra-error');
    expect(out).not.toContain('outcome ok');
  });
});

describe('clawgym inspect on a closed pipe', () => {
  it('stops quietly with exit 0 when the reader goes away (| head), no EPIPE crash', async () => {
    // Enough rollouts that the table is larger than a pipe's buffer.
    const dir = tmp('clawgym-epipe-');
    const store = new CallStore(join(dir, 'calls'));
    for (let i = 0; i < 1500; i++) {
      await store.append({
        runId: 'r', rolloutId: `rollout-with-a-long-name-${String(i).padStart(5, '0')}`, callIndex: 0, wireFormat: 'openai-chat', requestedModel: 'm',
        promptIds: Int32Array.from([1, 2, 3]), outputIds: [4], outputLogprobs: [0], finishReason: 'stop', origin: { kind: 'fork', reason: 'first call of the session' },
        policyVersion: 0, timings: { receivedAt: 0, finishedAt: 0 },
      });
    }
    await store.closeAll();
    // The real pipeline; pipefail makes its status clawgym's.
    const child = spawn('bash', ['-c', 'set -o pipefail; "$0" "$1" inspect "$2" | head -n 2', process.execPath, bin, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect(out.split('\n')[1]).toMatch(/^ROLLOUT\s+CALLS/);
    expect(err).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  }, 30_000);
});

describe('clawgym serve --engine X', () => {
  it('keeps the options the config gives engine X (the scripted replies)', async () => {
    const dir = tmp('clawgym-serve-engine-');
    writeFileSync(join(dir, 'package.json'), '{"name":"serve-engine","private":true}');
    writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { run: { outDir: ${JSON.stringify(join(dir, 'runs'))} }, engine: { use: 'scripted', options: { replies: [{ text: 'from the config' }] } } };\n`);
    let out = '';
    const stop = new AbortController();
    const served = serve({ engine: 'scripted', port: '0', name: 'engine-opts' }, { out: (s) => { out += s; }, cwd: dir, signal: stop.signal });
    while (!out.includes('Press Ctrl-C')) await new Promise((r) => setTimeout(r, 20));
    const url = /ANTHROPIC_BASE_URL=(\S+)/.exec(out)![1]!;
    const key = /ANTHROPIC_API_KEY=(\S+)/.exec(out)![1]!;
    try {
      const res = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(((await res.json()) as { content: unknown[] }).content).toEqual([{ type: 'text', text: 'from the config' }]);
    } finally {
      stop.abort();
      await served;
    }
  }, 30_000);
});
