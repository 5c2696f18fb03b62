import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The built CLI's launcher (these tests run the real `clawgym` as child processes). */
export const bin = resolve(__dirname, '../../../bin/clawgym.js');
const repo = resolve(__dirname, '../../../..');

/**
 * A project folder with the smallest real run: embedded engine and trainer, the agentloop
 * harness in the bubblewrap sandbox, `steps` steps of 4 rollouts (about 2 s a step here).
 */
export function tinyProject(steps: number, extra = ''): { dir: string; runDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-tiny-'));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"name":"tiny","private":true}');
  const model = '{ model: { dModel: 32, layers: 1, heads: 2, context: 384 } }';
  writeFileSync(join(dir, 'clawgym.config.mjs'), `export default { name: 'tiny', engine: { use: 'embedded', options: ${model} }, trainer: { use: 'embedded', options: ${model} },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], algorithm: 'grpo',
  run: { steps: ${steps}, tasksPerStep: 2, groupSize: 2, concurrency: 4, evalTasks: 2, evalEvery: 0, rolloutTimeoutMs: 60000 }${extra} };\n`);
  return { dir, runDir: join(dir, 'runs', 'tiny') };
}

/** A `clawgym` child: its output so far, and its exit (code, signal, output). */
export function clawgym(dir: string, args: string[], o: { node?: string } = {}): { child: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> } {
  const child = spawn(o.node ?? process.execPath, [bin, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((done) => child.on('close', (code, signal) => done({ code, signal, out })));
  return { child, output: () => out, exited };
}

/** The lines of a JSONL file (none if it is missing). */
export function jsonl<T = Record<string, unknown>>(file: string): T[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T) : [];
}

/** The step and eval events of a run's metrics, as `steps` `1,2` and their infra counts. */
export function stepsOf(runDir: string): { steps: string; infra: number; evals: string } {
  const m = jsonl<{ kind: string; step: number; values: { infra?: number } }>(join(runDir, 'metrics.jsonl'));
  const steps = m.filter((e) => e.kind === 'step');
  return { steps: steps.map((e) => e.step).join(','), infra: steps.reduce((a, e) => a + (e.values.infra ?? 0), 0), evals: m.filter((e) => e.kind === 'eval').map((e) => e.step).join(',') };
}

/** Resolves when `test()` holds (polled every 20 ms), or rejects after `ms`. */
export async function until(test: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
