import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildTree, byteChatMl, foldImportanceWeight, packTree, treesToDatums, type AdvantageResult, type GeneratedToken, type ModelCallRecord } from '@clawgym/core';
import { createTokenIdEngine } from './token-id-client';
import { type ModelConfig, SharedPolicy, publishPolicy } from '@clawgym/engine-embedded';
import { collect, scored } from './__fixtures__/tokens';
import { cpuKernels } from '@clawgym/kernels-cpu';

/*
 * A partial rollout: a weight update lands between two calls of one rollout. `clawgym engine
 * serve` (the built CLI, as SGLang 0025436e, the strictest) serves the embedded model; the
 * SGLang client a run uses loads the new weights between the calls. Each call's record carries
 * the version that served it, the tree keeps it per token, and the importance weight of each
 * token is taken against the logprob of the version that generated it.
 */
const bin = resolve(__dirname, '../../../core/bin/clawgym.js');
const plugin = resolve(__dirname, '../../engine-embedded/dist/index.js');
const model = { dModel: 16, layers: 1, heads: 2, context: 96 };
const { tokenizer, chatTemplate } = byteChatMl();
const config: ModelConfig = { vocabSize: tokenizer.vocabSize, ...model, mlpHidden: 4 * model.dModel, valueHead: true, valueDetach: true };
const END = chatTemplate.stopIds[0]!;
const dir = mkdtempSync(join(tmpdir(), 'clawgym-partial-rollout-'));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function startServer(): Promise<string> {
  writeFileSync(join(dir, 'clawgym.config.mjs'), [
    `import m from ${JSON.stringify(plugin)};`,
    'const embedded = m.default ?? m;',
    `export default { plugins: [embedded()], engine: { use: 'embedded', options: { model: ${JSON.stringify(model)} } }, run: { outDir: ${JSON.stringify(join(dir, 'runs'))} } };`,
  ].join('\n'));
  writeFileSync(join(dir, 'package.json'), '{"name":"partial-rollout-test","private":true}');
  child = spawn(process.execPath, [bin, 'engine', 'serve', '--config', join(dir, 'clawgym.config.mjs'), '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => { err += d; });
  return new Promise<string>((ok, fail) => {
    child!.stdout!.on('data', (d) => { out += d; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) ok(m[1]!); });
    child!.on('exit', (code) => fail(new Error(`engine serve exited ${code}: ${err}`)));
  });
}


const record = (callIndex: number, promptIds: Int32Array, out: GeneratedToken[], policyVersion: number, origin: ModelCallRecord['origin']): ModelCallRecord => ({
  runId: 'run', rolloutId: 'r', callIndex, wireFormat: 'openai-chat', requestedModel: 'embedded', promptIds,
  outputIds: out.map((t) => t.tokenId), outputLogprobs: out.map((t) => t.logprob), finishReason: 'stop', origin, policyVersion,
  timings: { receivedAt: 0, finishedAt: 1 },
});

describe('partial rollouts: a weight update between two calls of one rollout', () => {
  it('records each call\'s version, keeps it per token, and weights each token against its own version\'s logprob', async () => {
    const url = await startServer();
    const engine = createTokenIdEngine({ flavor: 'sglang', replicas: [url], model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000 });
    const v0 = new SharedPolicy(config, cpuKernels(), 0); // the server's initial weights (seed 0)
    const sampling = { maxTokens: 6, temperature: 1, topP: 1, stopIds: [END] };

    // Call 0 of rollout r, served by version 0.
    const S = tokenizer.special('<|im_start|>');
    const turn = (role: string, text: string) => [S, ...tokenizer.encode(`${role}\n${text}`), END, ...tokenizer.encode('\n')];
    const prompt0 = Int32Array.from([...turn('user', 'hi'), S, ...tokenizer.encode('assistant\n')]);
    const out0 = await collect(engine.generate({ promptIds: prompt0, sessionId: 'r', sampling }));
    expect(engine.policyVersion('r')).toBe(0);
    const rec0 = record(0, prompt0, out0, engine.policyVersion('r'), { kind: 'fork', reason: 'first call' });

    // The trainer steps and publishes version 1 while the rollout's harness runs its tool.
    const v1 = new SharedPolicy(config, cpuKernels(), 123);
    v1.version = 1;
    await engine.syncWeights!(await publishPolicy(v1, join(dir, 'weights')));

    // Call 1 extends call 0 (its prompt ids, its raw output, a tool result) and is served by version 1.
    const tail = [...tokenizer.encode('\n'), ...turn('user', '42'), S, ...tokenizer.encode('assistant\n')];
    const prompt1 = Int32Array.from([...prompt0, ...out0.map((t) => t.tokenId), ...tail]);
    expect(prompt1.length + sampling.maxTokens).toBeLessThanOrEqual(model.context);
    const out1 = await collect(engine.generate({ promptIds: prompt1, sessionId: 'r', sampling }));
    expect(engine.policyVersion('r')).toBe(1);
    const rec1 = record(1, prompt1, out1, engine.policyVersion('r'), { kind: 'reuse', parentCall: 0, reusedTokens: prompt0.length + out0.length });
    await engine.close!();

    // The tree keeps each generated run's version; packed, each trained token's.
    const tree = buildTree([rec0, rec1], { rolloutId: 'r', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId: END });
    const generated = tree.nodes.filter((n) => n.kind === 'generated');
    expect(generated.map((n) => [n.callIndex, n.policyVersion])).toEqual([[0, 0], [1, 1]]);
    const advantages: AdvantageResult = { algorithm: 'test', metrics: {}, advantages: new Map([['r', new Map(generated.map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))]]) };
    const packed = packTree(tree, advantages);
    const versions = Array.from(packed.policyVersions!).filter((v) => v >= 0);
    expect(versions).toEqual([...out0.map(() => 0), ...out1.map(() => 1)]);

    // Each token's rollout logprob is its own version's: call 0's under v0, call 1's under v1.
    const lp0v0 = scored(v0, prompt0, out0.map((t) => t.tokenId));
    const lp0v1 = scored(v1, prompt0, out0.map((t) => t.tokenId));
    const lp1v1 = scored(v1, prompt1, out1.map((t) => t.tokenId));
    out0.forEach((t, i) => expect(t.logprob).toBeCloseTo(lp0v0[i]!, 4));
    out1.forEach((t, i) => expect(t.logprob).toBeCloseTo(lp1v1[i]!, 4));
    expect(lp0v0.some((lp, i) => Math.abs(lp - lp0v1[i]!) > 1e-3)).toBe(true); // the update changed them

    // The trainer is at v1 (π_old = v1): the truncated importance weight min(π_old/π_rollout, C)
    // is 1 on call 1's tokens and v1/v0 on call 0's — each token against its own version.
    const d = treesToDatums([tree], advantages);
    expect(d.datums).toHaveLength(1);
    const datum = d.datums[0]!;
    const old = new Float32Array(datum.targetTokens.length);
    const lpOld = [...lp0v1, ...lp1v1];
    let g = 0;
    for (let i = 0; i < old.length; i++) if (datum.weights[i]) old[i] = lpOld[g++]!;
    expect(g).toBe(d.trainedTokens);
    const cap = 1e9;
    const [folded] = foldImportanceWeight(d, [old], cap);
    const weights = Array.from(datum.weights).flatMap((w, i) => (w ? [folded!.advantages![i]! * d.trainedTokens] : []));
    const want = [...lp0v1.map((lp, i) => Math.exp(lp - lp0v0[i]!)), ...out1.map(() => 1)];
    weights.forEach((w, i) => expect(w).toBeCloseTo(want[i]!, 3));
    child!.kill('SIGTERM');
  }, 60_000);
});
