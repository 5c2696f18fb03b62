import Anthropic from '@anthropic-ai/sdk';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from './main';

const bin = resolve(__dirname, '../../bin/clawgym.js');

describe('clawgym serve (built CLI) and clawgym inspect', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('prints per-session URLs and keys a client can use, records calls, stops cleanly on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-serve-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { run: { outDir: ${JSON.stringify(join(dir, 'runs'))} } };\n`);
    writeFileSync(join(dir, 'package.json'), '{"name":"serve-test","private":true}');
    const child = spawn(process.execPath, [bin, 'serve', '--engine', 'scripted', '--port', '0', '--name', 'by-hand'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (d) => { out += d; if (out.includes('Press Ctrl-C')) ready(); });
      child.on('exit', (code) => fail(new Error(`serve exited ${code}: ${err}`)));
    });
    const baseURL = /ANTHROPIC_BASE_URL=(\S+)/.exec(out)![1]!;
    const apiKey = /ANTHROPIC_API_KEY=(\S+)/.exec(out)![1]!;
    expect(out).toMatch(/OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/s\/s-1\/v1/);
    expect(out).toContain('wire_api = "responses"');

    const client = new Anthropic({ baseURL, apiKey, maxRetries: 0 });
    const first = await client.messages.create({ model: 'any', max_tokens: 200, messages: [{ role: 'user', content: 'hi' }] });
    expect(first.content).toEqual([{ type: 'text', text: 'Hello from the ClawGym scripted engine.' }]);
    await client.messages.create({ model: 'any', max_tokens: 200, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'again' }] });

    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    expect(out).toContain('stopped. 2 calls; TITO reuse 100.0% (1/1 main calls after the first)');

    let report = '';
    const io = { out: (s: string) => { report += s; }, err: (s: string) => { report += s; }, cwd: dir };
    expect(await main(['inspect', 'runs/by-hand', '--rollout', 's-1'], io)).toBe(0);
    expect(report).toMatch(/^1\s+-\s+0 root\s+anthropic-messages\s+\d+\s+\d+\s+\d+\s+stop\s+reuse of call 0 \(\d+ tokens\)\s+clean$/m);
    report = '';
    expect(await main(['inspect', 'runs/by-hand'], io)).toBe(0);
    expect(report).toMatch(/^s-1\s+2\s+100\.0%/m);
    expect(await main(['inspect', 'runs/nothing'], io)).toBe(1);
    expect(report).toContain('no call records in');
  }, 30_000);

  it('a server restarted with the same --name never appends into the earlier one\'s session files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-serve-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { run: { outDir: ${JSON.stringify(join(dir, 'runs'))} } };\n`);
    writeFileSync(join(dir, 'package.json'), '{"name":"serve-test","private":true}');
    const serveOnce = async () => {
      const child = spawn(process.execPath, [bin, 'serve', '--engine', 'scripted', '--port', '0', '--name', 'same'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      await new Promise<void>((ready, fail) => {
        child.stdout.on('data', (d) => { out += d; if (out.includes('Press Ctrl-C')) ready(); });
        child.on('exit', (code) => fail(new Error(`serve exited ${code}`)));
      });
      const baseURL = /ANTHROPIC_BASE_URL=(\S+)/.exec(out)![1]!;
      const apiKey = /ANTHROPIC_API_KEY=(\S+)/.exec(out)![1]!;
      await new Anthropic({ baseURL, apiKey, maxRetries: 0 }).messages.create({ model: 'any', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
      const exit = new Promise((r) => child.on('exit', r));
      child.kill('SIGKILL'); // as a crash would: nothing gets to tidy up
      await exit;
      return baseURL;
    };
    expect(await serveOnce()).toMatch(/\/s\/s-1$/);
    expect(await serveOnce()).toMatch(/\/s\/s2-1$/);
    const indices = (id: string) => readFileSync(join(dir, 'runs', 'same', 'calls', `${id}.jsonl`), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { callIndex: number }).callIndex);
    expect(indices('s-1')).toEqual([0]);
    expect(indices('s2-1')).toEqual([0]);
  }, 30_000);
});
