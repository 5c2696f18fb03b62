import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { clawgym, until } from './__fixtures__/tiny-project';

// `clawgym serve` (the built CLI) whose records folder is deleted while it answers: no call is
// answered as a success without its record.
describe('clawgym serve with its run folder removed', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('answers no call 200 that it could not record, warns, and reports answered vs recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-serve-rm-'));
    dirs.push(dir);
    symlinkSync(resolve(__dirname, '../../../node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), '{"name":"serve-rm","private":true}');
    writeFileSync(join(dir, 'clawgym.config.mjs'), 'export default { run: { outDir: "runs" } };\n');
    const serve = clawgym(dir, ['serve', '--engine', 'scripted', '--port', '0', '--name', 'gone']);
    await until(() => serve.output().includes('Press Ctrl-C'), 60_000, 'serve to start');
    const base = /ANTHROPIC_BASE_URL=(\S+)/.exec(serve.output())![1]!;
    const key = /ANTHROPIC_API_KEY=(\S+)/.exec(serve.output())![1]!;
    const ask = async (content: string, stream = false) => {
      const res = await fetch(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 32, stream, messages: [{ role: 'user', content }] }) });
      const text = await res.text();
      // A success: a 200 with the whole answer (a stream's final event included).
      return res.status === 200 && (stream ? text.includes('event: message_stop') : text.includes('"type":"message"'));
    };
    expect(await ask('first')).toBe(true);
    rmSync(join(dir, 'runs', 'gone'), { recursive: true, force: true });
    const after = [await ask('second'), await ask('third', true), await ask('fourth')];
    expect(after).toEqual([false, false, false]);
    expect(serve.output()).toMatch(/warning: cannot write \S+gone\/calls\/s-1\.jsonl \(ENOENT: the folder was removed\); calls that cannot be recorded are answered with an error/);
    serve.child.kill('SIGINT');
    const exit = await serve.exited;
    expect(exit.code).toBe(0);
    expect(exit.out).toContain('1 calls answered, 0 recorded (1 records lost:');
  }, 90_000);
});
