/**
 * PinchBench's real task files (__fixtures__/pinchbench: seven tasks and two assets of
 * pinchbench/skill at 14b2993, MIT) loaded and graded as its scripts/lib_tasks.py and
 * scripts/lib_grading.py do: the automated grade() in a real bubblewrap sandbox on a transcript
 * synthesized from a conversation as the proxy records it, hybrid weights with a judge on
 * loopback, and llm_judge tasks left out without one.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, localSandboxProvider, type CanonicalMessage, type Sandbox } from '@clawgym/core';
import { bubblewrapMissing, createTestKernel, describeIf } from '@clawgym/core/testing';
import taskFormats, { combineGrades, gradeAutomated, loadPinchBenchFolder, openclawTranscript, parseJudgeText, pinchbench, type PinchBenchTask } from './index';

const FIX = join(__dirname, '__fixtures__', 'pinchbench');

describe('PinchBench loader', () => {
  it('loads the repository folder as a suite, leaving out llm_judge tasks without a judge and multi-session tasks, one line each', async () => {
    const logs: string[] = [];
    const { tasks, problems } = await loadPinchBenchFolder(FIX);
    expect(tasks.map((t) => [t.id, t.spec.gradingType])).toEqual([
      ['task_00_sanity', 'automated'], ['task_08_memory', 'automated'], ['task_10_workflow', 'hybrid'],
      ['task_16_email_triage', 'hybrid'], ['task_18_spreadsheet_summary', 'hybrid'],
    ]);
    expect(problems.map((p) => [p.where.split('/').pop(), p.message])).toEqual([
      ['task_03_blog.md', expect.stringContaining('graded by an LLM judge only, and no judge is configured')],
      ['task_22_second_brain.md', expect.stringContaining('multi-session task')],
    ]);
    const suite = pinchbench(FIX, { log: (m) => logs.push(m), testIds: [] });
    expect(suite.name).toBe('pinchbench:pinchbench');
    expect(await suite.tasks('train', { seed: 0 })).toHaveLength(5);
    expect(logs).toEqual([expect.stringMatching(/^clawgym: PinchBench task_03_blog\.md: left out/), expect.stringMatching(/^clawgym: PinchBench task_22_second_brain\.md: left out/)]);
    const withJudge = await loadPinchBenchFolder(FIX, { judge: { baseUrl: 'http://127.0.0.1:9/v1', model: 'j' } });
    expect(withJudge.tasks.map((t) => t.id)).toContain('task_03_blog');
  });

  it('reads weights, time limits, criteria and workspace files (inline and from assets/)', async () => {
    const { tasks } = await loadPinchBenchFolder(FIX);
    const by = new Map(tasks.map((t) => [t.id, t]));
    expect(by.get('task_16_email_triage')!.spec.weights).toEqual({ automated: 0.4, llmJudge: 0.6 });
    expect(by.get('task_10_workflow')!.spec.weights).toEqual({ automated: 0.5, llmJudge: 0.5 });
    expect(by.get('task_08_memory')).toMatchObject({ timeLimitMs: 120_000, instruction: expect.stringContaining('Save your answer to answer.txt') });
    expect(by.get('task_00_sanity')!.spec.gradingCriteria.length).toBeGreaterThan(0);
    const ws = fsWorkspace(mkdtempSync(join(tmpdir(), 'pinch-ws-')));
    await by.get('task_18_spreadsheet_summary')!.setup(ws);
    expect((await ws.list()).sort()).toEqual(['company_expenses.xlsx', 'quarterly_sales.csv']);
    await by.get('task_08_memory')!.setup(ws);
    expect((await ws.readFile('notes.md')).toString()).toContain('Project Phoenix');
    await rm(ws.root, { recursive: true, force: true });
  });

  it('combines a hybrid grade with its weights, and reads judge replies as lib_grading does', () => {
    const spec = { weights: { automated: 0.4, llmJudge: 0.6 } } as PinchBenchTask['spec'];
    expect(combineGrades(spec, { score: 1, breakdown: { a: 1 }, notes: '' }, { score: 0.5, breakdown: { b: 0.5 }, notes: 'n' }))
      .toEqual({ score: 0.7, breakdown: { 'automated.a': 1, 'llm_judge.b': 0.5 }, notes: 'n' });
    expect(combineGrades({ weights: { automated: 0, llmJudge: 0 } } as PinchBenchTask['spec'], { score: 1, breakdown: {}, notes: '' }, { score: 0, breakdown: {}, notes: '' }).score).toBe(0.5);
    expect(parseJudgeText('Here:\n```json\n{"scores": {"x": 0.8}, "total": 0.75, "notes": "ok"}\n```')).toEqual({ score: 0.75, breakdown: { x: 0.8 }, notes: 'ok' });
    expect(parseJudgeText('{"a": 1} then {"scores": {"x": {"score": 0.4}}}')).toEqual({ score: 0.4, breakdown: { x: 0.4 }, notes: '' });
    expect(parseJudgeText('Overall score: 0.65')).toMatchObject({ score: 0.65 });
    expect(parseJudgeText('no idea')).toBeUndefined();
  });

  it('is configured through the plugin as pinchbench: [folder]', async () => {
    const kernel = await createTestKernel({ plugins: [taskFormats({ pinchbench: [FIX] })] });
    expect(kernel.registry.has('taskSuite', 'pinchbench:pinchbench')).toBe(true);
  });
});

/** A conversation as the proxy keeps it: the last request's messages and the reply returned. */
const conversationFor = (task: PinchBenchTask, reply: string): CanonicalMessage[] => [
  { role: 'system', parts: [{ type: 'text', text: 'You are a helpful agent.' }] },
  { role: 'user', parts: [{ type: 'text', text: task.instruction }] },
  { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'read_file', arguments: '{"path":"notes.md"}' }] },
  { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', content: '# Project Phoenix …' }] },
  { role: 'assistant', parts: [{ type: 'text', text: reply }] },
];

describeIf(bubblewrapMissing(), 'PinchBench grading in a bubblewrap sandbox', () => {
  let dir: string;
  let server: Server;
  let judgeServer: HttpServer;
  let judgeUrl = '';
  const prompts: string[] = [];
  let provider: ReturnType<typeof localSandboxProvider>;
  let n = 0;
  const open: Sandbox[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pinch-'));
    server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(join(dir, 'model.sock'), r));
    // A judge on loopback answering as a chat completions server, with a fenced JSON reply.
    judgeServer = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        prompts.push((JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '```json\n{"scores": {"quality": 0.5}, "total": 0.5, "notes": "fair"}\n```' } }] }));
      });
    });
    await new Promise<void>((r) => judgeServer.listen(0, '127.0.0.1', r));
    judgeUrl = `http://127.0.0.1:${(judgeServer.address() as { port: number }).port}/v1`;
    provider = localSandboxProvider({ root: join(dir, 'sandboxes'), log: () => {} });
  });
  afterAll(async () => {
    for (const sb of open) await sb.destroy();
    await provider?.close();
    if (server) await new Promise<void>((r) => server.close(() => r()));
    if (judgeServer) await new Promise<void>((r) => judgeServer.close(() => r()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function prepared(task: PinchBenchTask) {
    const sb = await provider.create({ runId: 'pinch', rolloutId: `r${++n}`, limits: {}, modelEndpoint: { socketPath: join(dir, 'model.sock'), url: 'http://127.0.0.1:9/unused' } });
    open.push(sb);
    const ws = fsWorkspace(sb.workspaceHostPath);
    await task.setup(ws);
    return { sb, ws };
  }

  it("grades automated tasks with their own grade() on the synthesized transcript and the workspace", async () => {
    const { tasks } = await loadPinchBenchFolder(FIX);
    const sanity = tasks.find((t) => t.id === 'task_00_sanity')!;
    const a = await prepared(sanity);
    expect(await sanity.verify(a.ws, { sandbox: a.sb, conversation: conversationFor(sanity, 'Hello!') })).toMatchObject({ reward: 1, pass: true });
    const silent = await prepared(sanity);
    expect(await sanity.verify(silent.ws, { sandbox: silent.sb })).toMatchObject({ reward: 0, pass: false, details: expect.stringContaining('agent_responded=0') });

    const memory = tasks.find((t) => t.id === 'task_08_memory')!;
    const m = await prepared(memory);
    await m.ws.writeFile('answer.txt', 'The beta release deadline is June 1, 2024.\n');
    const v = await memory.verify(m.ws, { sandbox: m.sb, conversation: conversationFor(memory, 'Saved the answer to answer.txt.') });
    // read_notes looks for OpenClaw tool calls with `params.files`; the transcript carries the harness's own `arguments`.
    expect(v.details).toContain('file_created=1 correct_date=1 clear_answer=1 read_notes=0 no_hallucination=1');
    expect(v).toMatchObject({ reward: 0.8, pass: false });
  }, 60_000);

  it('scores a hybrid task with its weights when a judge is configured, and its automated part alone (saying so) when not', async () => {
    const judged = (await loadPinchBenchFolder(FIX, { judge: { baseUrl: judgeUrl, model: 'judge' } })).tasks.find((t) => t.id === 'task_16_email_triage')!;
    const plain = (await loadPinchBenchFolder(FIX)).tasks.find((t) => t.id === 'task_16_email_triage')!;
    const a = await prepared(judged);
    const conversation = conversationFor(judged, 'Triaged the inbox.');
    const auto = await gradeAutomated(a.sb, judged.spec, openclawTranscript(conversation));
    const hybrid = await judged.verify(a.ws, { sandbox: a.sb, conversation });
    expect(hybrid.reward).toBeCloseTo(auto.score * 0.4 + 0.5 * 0.6, 12);
    expect(hybrid.details).toContain('llm_judge.quality=0.5');
    expect(prompts.at(-1)).toContain('## Agent Transcript (summarized)\nUser: ');
    expect(prompts.at(-1)).toContain('Tool: read_file({"path":"notes.md"})');
    const b = await prepared(plain);
    const alone = await plain.verify(b.ws, { sandbox: b.sb, conversation });
    expect(alone.reward).toBeCloseTo(auto.score, 12);
    expect(alone.details).toContain('automated part only: no judge is configured');
  }, 60_000);

  it('counts a grade() that crashes as a verifier fault', async () => {
    const { tasks } = await loadPinchBenchFolder(FIX);
    const sanity = tasks.find((t) => t.id === 'task_00_sanity')!;
    const broken = { ...sanity, spec: { ...sanity.spec, gradingCode: 'def grade(t, w):\n    raise RuntimeError("boom")\n' } };
    const a = await prepared(sanity);
    await expect(gradeAutomated(a.sb, broken.spec, [])).rejects.toMatchObject({ code: 'CLAWGYM_VERIFIER_FAILED', message: expect.stringContaining('RuntimeError: boom') });
  }, 60_000);
});
