/**
 * Agreement of our ClawGym-Task grading with ClawGym-RL's, measured on the same workspaces: each
 * task's reward.sh run the reference way (a Python port of ClawGym-RL's grading, given as
 * `referenceScript`: bench/clawgym-bench/reference_grade.py) and the project's way (the task's
 * own verify() in a local sandbox). The workspaces: the untouched inputs; the inputs plus every
 * output path the query names written with stub content (existence sub-scores then rise above
 * 0, so the comparison discriminates); and hand-made near-solutions for a few tasks.
 *
 * A case agrees when both read the same score, or when the reference's silent 0.0 (reward.sh
 * exited non-zero, printed nothing or no number) is a verifier fault here, or both ran past
 * the limit. Used by `npm run bench:clawgym-bench` and its jest test.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes, fsWorkspace, isClawGymError, messageOf, type SandboxProvider, type Workspace } from '@clawgym/core';
import type { ClawGymBenchTask } from './clawgym-bench';
import { filesUnder } from './files';

/** One workspace to grade both ways: files written over the inputs, or a command run in the workspace. */
export interface AgreementVariant {
  name: string;
  writes: [string, string][];
  run?: string;
  finalMessage?: string;
}

/** How one way graded one variant. */
export type Graded = { score: number; ms: number } | { fault: string; ms: number } | { timedOut: true; ms: number };

export interface AgreementCase {
  task: string;
  variant: string;
  reference: Graded;
  ours: Graded;
  agree: boolean;
}

export interface AgreementOptions {
  /** The reference grader (bench/clawgym-bench/reference_grade.py). */
  referenceScript: string;
  /** Python to run it with (default Debian's /usr/bin/python3). */
  python?: string;
  /** A local sandbox provider with bubblewrap. */
  sandboxes: SandboxProvider;
  /** The model socket sandboxes bind (nothing calls it). */
  socketPath: string;
  /** Near-solutions by task id: extra variants. */
  nearSolutions?: Record<string, AgreementVariant>;
  /** Grade the untouched inputs too (default true; they mostly score 0 both ways). */
  untouched?: boolean;
  /** Tasks graded at once (default 2). */
  concurrency?: number;
  onCase?: (c: AgreementCase) => void;
}

const STUBS: Record<string, string> = {
  json: '{}\n', jsonl: '{}\n', csv: 'id,value\n1,1\n', tsv: 'id\tvalue\n1\t1\n', md: '# Stub\n\nstub\n', txt: 'stub\n', log: 'stub\n',
  py: 'print("stub")\n', sh: '#!/usr/bin/env bash\necho stub\n', yaml: 'stub: true\n', yml: 'stub: true\n', html: '<html><body>stub</body></html>\n',
  xml: '<stub/>\n', ics: 'BEGIN:VCALENDAR\nEND:VCALENDAR\n', toml: 'stub = true\n', ini: '[stub]\nx = 1\n', svg: '<svg xmlns="http://www.w3.org/2000/svg"/>\n',
};
const PATH_TOKEN = /(?<![\w/.-])((?:\.\/)?(?:[\w-]+\/)*[\w.-]+\.([A-Za-z0-9]{1,5}))(?![\w/])/g;

/** Every relative output path the query names (with an extension we can stub), minus the task's inputs and reward/. */
export function outputPathsOf(query: string, inputs: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const m of query.matchAll(PATH_TOKEN)) {
    const path = m[1]!.replace(/^\.\//, '');
    const ext = m[2]!.toLowerCase();
    if (!(ext in STUBS) || inputs.has(path) || path.startsWith('reward/') || path.startsWith('input/') || /^\d/.test(path) || path.includes('..')) continue;
    out.add(path);
  }
  return [...out].sort();
}

/** The stub variant of a task: each output path written with stub content for its type. */
export function stubVariant(query: string, inputs: ReadonlySet<string>): AgreementVariant {
  return { name: 'stubs', writes: outputPathsOf(query, inputs).map((p) => [p, STUBS[p.split('.').pop()!.toLowerCase()]!]) };
}

/** A reference grader process: jobs in, results out, one at a time. */
class ReferenceGrader {
  private readonly child;
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(script: string, python: string) {
    this.child = spawn(python, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
  }

  grade(job: Record<string, unknown>): Promise<Graded> {
    return new Promise((resolve, reject) => {
      this.waiting.push((line) => {
        const r = JSON.parse(line) as Record<string, unknown>;
        const ms = Number(r.grade_ms ?? 0);
        if (typeof r.error === 'string') reject(new ClawGymError(ErrorCodes.AGREEMENT_FAILED, `the reference grader could not grade: ${r.error}`));
        else if (r.timed_out) resolve({ timedOut: true, ms });
        else if (r.parse !== 'ok') resolve({ fault: `${String(r.parse)} (exit ${String(r.returncode)}): ${String(r.stderr ?? '').trim().slice(-300)}`, ms });
        else resolve({ score: typeof r.score === 'string' ? Number(r.score.replace('inf', 'Infinity')) : Number(r.score), ms });
      });
      this.child.stdin.write(`${JSON.stringify(job)}\n`);
    });
  }

  close(): void { this.child.stdin.end(); }
}

/** Empty a workspace folder (its files, not the folder: the sandbox binds it). */
async function emptyWorkspace(ws: Workspace): Promise<void> {
  for (const name of await ws.list()) await rm(join(ws.root, name), { recursive: true, force: true });
}

/** Do both graders read the same thing? (see the file comment) */
export function agrees(reference: Graded, ours: Graded): boolean {
  if ('score' in reference) return 'score' in ours && (ours.score === reference.score || Math.abs(ours.score - reference.score) <= 1e-12 || (reference.score > 1 && ours.score === 1) || (reference.score < 0 && ours.score === 0));
  if ('fault' in reference) return 'fault' in ours;
  return 'timedOut' in ours;
}

async function oursOn(task: ClawGymBenchTask, variant: AgreementVariant, sandbox: Awaited<ReturnType<SandboxProvider['create']>>): Promise<Graded> {
  const ws = fsWorkspace(sandbox.workspaceHostPath);
  await emptyWorkspace(ws);
  await task.setup(ws);
  for (const [path, text] of variant.writes) await ws.writeFile(path, text);
  if (variant.run) {
    const r = await sandbox.exec(['bash', '-c', variant.run], { timeoutMs: 120_000, modelForwarder: false });
    if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.AGREEMENT_FAILED, `the near-solution of ${task.id} failed in the sandbox (exit ${r.exitCode}): ${r.stderr.slice(-500)}`);
  }
  const t0 = performance.now();
  try {
    const v = await task.verify(ws, { sandbox, finalMessage: variant.finalMessage ?? '' });
    const ms = performance.now() - t0;
    return v.details.includes('ran past its') ? { timedOut: true, ms } : { score: v.reward, ms };
  } catch (err) {
    if (!isClawGymError(err) || err.code !== 'CLAWGYM_VERIFIER_FAILED') throw err;
    return { fault: messageOf(err), ms: performance.now() - t0 };
  }
}

/** Grade every task's variants both ways (see the file comment). */
export async function clawgymAgreement(tasks: readonly ClawGymBenchTask[], o: AgreementOptions): Promise<AgreementCase[]> {
  const cases: AgreementCase[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'clawgym-agreement-'));
  const runId = `agree${process.pid}`;
  let next = 0;
  const worker = async (w: number) => {
    const reference = new ReferenceGrader(o.referenceScript, o.python ?? '/usr/bin/python3');
    try {
      while (next < tasks.length) {
        const task = tasks[next++]!;
        const inputs = new Set(await inputPaths(task));
        const variants: AgreementVariant[] = [...(o.untouched === false ? [] : [{ name: 'untouched', writes: [] }]), stubVariant(task.instruction, inputs)];
        if (o.nearSolutions?.[task.id]) variants.push(o.nearSolutions[task.id]!);
        const sandbox = await o.sandboxes.create({ runId, rolloutId: `${task.id}-${w}`, limits: {}, modelEndpoint: { socketPath: o.socketPath, url: 'http://127.0.0.1:9/unused' }, workspacePath: task.workspacePath });
        try {
          for (const variant of variants) {
            const ref = await reference.grade({ id: `${task.id}/${variant.name}`, task_dir: task.dir, work_dir: join(scratch, `w${w}`), writes: variant.writes, run: variant.run ?? null, final_message: variant.finalMessage ?? '' });
            const ours = await oursOn(task, variant, sandbox);
            const c = { task: task.id, variant: variant.name, reference: ref, ours, agree: agrees(ref, ours) };
            cases.push(c);
            o.onCase?.(c);
          }
        } finally {
          await sandbox.destroy();
        }
      }
    } finally {
      reference.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 2, tasks.length) }, (_, w) => worker(w)));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return cases;
}

/** The task's input files, as paths in the workspace (what the stub variant must not overwrite). */
async function inputPaths(task: ClawGymBenchTask): Promise<string[]> {
  const sub = typeof task.entry.input_mount_dir === 'string' ? task.entry.input_mount_dir.replace(/^\/root\/\.openclaw\/workspace\/?/, '') : undefined;
  if (sub === undefined) return [];
  return (await filesUnder(join(task.dir, 'input_files'))).map((f) => (sub ? `${sub}/${f}` : f));
}
