import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, isClawGymError, type Task, type Workspace } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import jobbench, { buildDocx, jobbenchDir, loadJobBench, parseRubrics, type JudgeEndpoint } from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const ROOT = join(__dirname, '__fixtures__', 'jobbench');

interface Seen { url?: string; auth?: string; body: { model: string; temperature: number; messages: { role: string; content: string }[] } }

/** A stand-in judge: checks the request shape, records it, answers what `reply` says. */
async function startJudge(reply: (user: string) => { status?: number; content: string }): Promise<{ server: Server; endpoint: JudgeEndpoint; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = JSON.parse(raw) as Seen['body'];
      seen.push({ url: `${req.method} ${req.url}`, auth: req.headers.authorization, body });
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const r = reply(user);
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: r.content }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { server, seen, endpoint: { baseUrl: `http://127.0.0.1:${port}/v1/`, apiKey: 'sk-test', model: 'judge-mini' } };
}

const stop = (s: Server) => new Promise<void>((r) => s.close(() => r()));

async function prepared(task: Task): Promise<Workspace> {
  const ws = fsWorkspace(tmp('jobbench-dir-'));
  await task.setup(ws);
  return ws;
}

describe('JobBench on-disk loader', () => {
  it('loads every task with its occupation, instruction and reference files, never the rubric', async () => {
    const tasks = await loadJobBench(ROOT);
    expect(tasks.map((t) => [t.id, t.category])).toEqual([['jobbench/accountant/task1', 'accountant'], ['jobbench/paralegal/task2', 'paralegal']]);
    expect(tasks[0]!.instruction).toContain('write a short reconciliation');
    expect(tasks[0]!.instruction).toContain('Reference files (in the working folder): ledger.csv, notes/policy.txt.');
    const ws = await prepared(tasks[0]!);
    expect(await ws.list()).toEqual(['ledger.csv', 'notes']);
    expect(await ws.list('notes')).toEqual(['policy.txt']);
    expect(await ws.exists('RUBRICS.json')).toBe(false);
    expect(await ws.exists('TASK_INSTRUCTIONS.txt')).toBe(false);
  });

  it('reads rubric lists of strings and of objects, and says what is wrong with others', () => {
    expect(parseRubrics(['a', 'b'], 'x')).toEqual([{ id: '1', text: 'a' }, { id: '2', text: 'b' }]);
    expect(parseRubrics({ criteria: [{ id: 'R9', description: 'd' }] }, 'x')).toEqual([{ id: 'R9', text: 'd' }]);
    expect(() => parseRubrics({ foo: 1 }, 'x.json')).toThrow('x.json: expected a list of rubric items');
    expect(() => parseRubrics([{ weight: 2 }], 'x.json')).toThrow('rubric item 1 has no text');
  });

  it('fails clearly on a folder without tasks', async () => {
    await expect(loadJobBench(tmp('empty-'))).rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('no JobBench tasks') });
  });

  it('splits by listed ids and is registered per folder by the plugin', async () => {
    const suite = jobbenchDir(ROOT, undefined, { testIds: ['jobbench/paralegal/task2'] });
    expect(suite.name).toBe('jobbench:jobbench');
    expect((await suite.tasks('test', { seed: 0 })).map((t) => t.id)).toEqual(['jobbench/paralegal/task2']);
    expect((await suite.tasks('train', { seed: 0 })).map((t) => t.id)).toEqual(['jobbench/accountant/task1']);
    const kernel = await createTestKernel({ plugins: [jobbench({ dirs: [{ root: ROOT, name: 'jobbench-sample', testFraction: 0 }] })] });
    expect(await kernel.registry.get('taskSuite', 'jobbench-sample').tasks('train', { seed: 1 })).toHaveLength(2);
  });
});

describe('JobBench rubric judge', () => {
  it('fails with a ClawGymError when no judge endpoint is configured', async () => {
    const [task] = await loadJobBench(ROOT);
    const err = await task!.verify(await prepared(task!)).catch((e: unknown) => e);
    expect(isClawGymError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('no judge endpoint is configured') });
  });

  it('asks the judge with the task, rubric and final files, and rewards the mean item score', async () => {
    const judge = await startJudge((user) => ({
      content: 'Here is my grading:\n```json\n' + JSON.stringify({ scores: [
        { id: 'R1', score: user.includes('4,310.00') ? 1 : 0, reason: 'total stated' },
        { id: 'R2', score: user.includes('T-104') && user.includes('T-107') ? 1 : 0, reason: 'both flagged' },
        { id: 'R3', score: 0, reason: 'no next steps' },
      ] }) + '\n```',
    }));
    try {
      const [task] = await loadJobBench(ROOT, judge.endpoint);
      const ws = await prepared(task!);
      await ws.writeFile('reconciliation.md', 'Total spend: 4,310.00 EUR.\nAbove threshold: T-104 (1,450.00), T-107 (1,900.00).\n');
      const v = await task!.verify(ws);
      expect(v.reward).toBeCloseTo(2 / 3);
      expect(v.pass).toBe(false);
      expect(v.details).toContain('2/3 rubric items met (judge judge-mini)');
      expect(v.details).toContain('✗ [R3] Recommends a next step for each flagged transaction — no next steps');

      expect(judge.seen).toHaveLength(1);
      const [req] = judge.seen;
      expect(req!.url).toBe('POST /v1/chat/completions');
      expect(req!.auth).toBe('Bearer sk-test');
      expect(req!.body.model).toBe('judge-mini');
      expect(req!.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
      const user = req!.body.messages[1]!.content;
      expect(user).toContain('- [R2] Lists both transactions above the 1,000 EUR approval threshold');
      expect(user).toContain('=== FILE: reconciliation.md ===\nTotal spend: 4,310.00 EUR.');
      expect(user).toContain('=== FILE: ledger.csv (provided with the task, unchanged) ===');
      expect(user).not.toContain('RUBRICS.json');
    } finally {
      await stop(judge.server);
    }
  });

  it('passes when every item is met, reads office files, and retries once on an unusable reply', async () => {
    let calls = 0;
    const judge = await startJudge((user) => {
      calls++;
      if (calls === 1) return { content: 'I think it is fine.' };
      return { content: JSON.stringify({ scores: ['1', '2', '3'].map((id) => ({ id, score: user.includes('Northwind') ? 1 : 0 })) }) };
    });
    try {
      const [, task] = await loadJobBench(ROOT, judge.endpoint);
      const ws = await prepared(task!);
      await ws.writeFile('summary.docx', await buildDocx(['Parties: Northwind Traders and Contoso Logistics']));
      expect(await task!.verify(ws)).toMatchObject({ reward: 1, pass: true });
      expect(calls).toBe(2);
      expect(judge.seen[1]!.body.messages[1]!.content).toContain('=== FILE: summary.docx ===\nParties: Northwind Traders');
    } finally {
      await stop(judge.server);
    }
  });

  it('throws (an infrastructure failure, not reward 0) when the judge keeps failing', async () => {
    const judge = await startJudge(() => ({ status: 500, content: 'overloaded' }));
    try {
      const [task] = await loadJobBench(ROOT, judge.endpoint);
      await expect(task!.verify(await prepared(task!))).rejects.toMatchObject({
        code: 'CLAWGYM_JUDGE_FAILED', message: expect.stringMatching(/rubric judge \(judge-mini .*\) could not grade: .*HTTP 500/),
      });
      expect(judge.seen).toHaveLength(2);
    } finally {
      await stop(judge.server);
    }
  });
});
