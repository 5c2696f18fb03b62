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

describe('clawgym serve with calls near the body limit', () => {
  it('exits 0 on Ctrl-C after a session of five 30 MiB calls, and says what it recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-serve-big-'));
    let stop = () => {};
    try {
      writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { run: { outDir: ${JSON.stringify(join(dir, 'runs'))} } };\n`);
      writeFileSync(join(dir, 'package.json'), '{"name":"serve-test","private":true}');
      const child = spawn(process.execPath, [bin, 'serve', '--engine', 'scripted', '--port', '0', '--name', 'big'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      stop = () => child.kill('SIGKILL');
      let out = '';
      let err = '';
      child.stderr.on('data', (d) => { err += d; });
      const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      await new Promise<void>((ready, fail) => {
        child.stdout.on('data', (d) => { out += d; if (out.includes('Press Ctrl-C')) ready(); });
        void exit.then((code) => fail(new Error(`serve exited ${code}: ${err}`)));
      });
      const baseURL = /OPENAI_BASE_URL=(\S+)/.exec(out)![1]!;
      const apiKey = /OPENAI_API_KEY=(\S+)/.exec(out)![1]!;
      // Five chat requests of 30 MiB each (under the 32 MB limit), none extending another: a
      // tool result of its own each time, every id of it new.
      for (let i = 0; i < 5; i++) {
        const content = `${String.fromCharCode(97 + i)}bcdefghij `.repeat(Math.floor(30 * 1024 * 1024 / 11) + 10);
        const body = JSON.stringify({ model: 'm', max_tokens: 16, messages: [
          { role: 'user', content: `read file ${i}` },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content },
        ] });
        expect(Buffer.byteLength(body)).toBeGreaterThan(30 * 1024 * 1024);
        expect(Buffer.byteLength(body)).toBeLessThan(32 * 1024 * 1024);
        const res = await fetch(`${baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body });
        expect(res.status).toBe(200);
        await res.text();
      }
      child.kill('SIGINT');
      expect({ code: await exit, err: err.slice(-500) }).toEqual({ code: 0, err: '' });
      expect(out).toContain('stopped. 5 calls;');
      let report = '';
      const io = { out: (s: string) => { report += s; }, err: (s: string) => { report += s; }, cwd: dir };
      expect(await main(['inspect', 'runs/big'], io)).toBe(0);
      expect(report).toMatch(/^s-1\s+5\s/m);
    } finally {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
