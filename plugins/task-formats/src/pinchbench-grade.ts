/**
 * PinchBench's grading (`scripts/lib_grading.py` of pinchbench/skill): the task's
 * `grade(transcript, workspace_path)` run with Python inside the rollout's sandbox on the
 * synthesized OpenClaw transcript (its score the mean of the numeric values it returns, as
 * `_average_scores`), the LLM judge asked with PinchBench's prompt, and a hybrid task's two parts
 * combined with its `grading_weights` (`_combine_grades`).
 */
import { posix } from 'node:path';
import { ClawGymError, ErrorCodes, z, type Sandbox } from '@clawgym/core';
import type { TranscriptEntry } from './openclaw-transcript';
import type { PinchBenchSpec } from './pinchbench-task';
import { outputTail, VERIFIER_DIR } from './verifier-script';

/** An OpenAI-compatible chat endpoint for the judge (the same shape as the JobBench rubric judge's). */
export const PinchJudgeSchema = z.strictObject({
  baseUrl: z.string().url(),
  apiKey: z.string().optional(),
  model: z.string().min(1),
  timeoutMs: z.number().int().positive().optional(),
});
export type PinchJudge = z.infer<typeof PinchJudgeSchema>;

/** One part's result: its score in [0, 1] and the named sub-scores. */
export interface PartGrade { score: number; breakdown: Record<string, number>; notes: string }

/** Runs `grade()` as lib_grading's `_grade_automated` does, and prints the result as JSON. */
const RUNNER = `import json, sys
code = open(sys.argv[1], encoding="utf-8").read()
transcript = json.load(open(sys.argv[2], encoding="utf-8"))
namespace = {}
exec(code, namespace)
grade = namespace.get("grade")
if not callable(grade):
    print(json.dumps({"missing": True}))
    sys.exit(0)
scores = grade(transcript, sys.argv[3])
if not isinstance(scores, dict):
    scores = {}
values = [float(v) for v in scores.values() if isinstance(v, (int, float))]
breakdown = {}
for key, value in scores.items():
    try:
        breakdown[str(key)] = float(value)
    except (TypeError, ValueError):
        continue
print(json.dumps({"total": sum(values) / len(values) if values else 0.0, "breakdown": breakdown}))
`;

/** The automated part, in the sandbox (Python 3 there); a crash is a verifier fault with its output. */
export async function gradeAutomated(sandbox: Sandbox, spec: PinchBenchSpec, transcript: TranscriptEntry[], timeoutMs = 120_000): Promise<PartGrade> {
  if (!spec.gradingCode) return { score: 0, breakdown: {}, notes: 'No automated grading code found' };
  const dir = posix.join(sandbox.homePath, VERIFIER_DIR, 'pinchbench');
  const rm = await sandbox.exec(['rm', '-rf', '--', posix.join(sandbox.homePath, VERIFIER_DIR)], { timeoutMs: 30_000, modelForwarder: false });
  if (rm.exitCode !== 0) throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `could not clear ${VERIFIER_DIR} in the sandbox: ${rm.stderr.trim()}`);
  await sandbox.writeFile(posix.join(dir, 'grade.py'), spec.gradingCode);
  await sandbox.writeFile(posix.join(dir, 'run.py'), RUNNER);
  await sandbox.writeFile(posix.join(dir, 'transcript.json'), JSON.stringify(transcript));
  const run = await sandbox.exec(['python3', posix.join(dir, 'run.py'), posix.join(dir, 'grade.py'), posix.join(dir, 'transcript.json'), sandbox.workspacePath], {
    cwd: sandbox.workspacePath, timeoutMs, modelForwarder: false,
  });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  let parsed: { total?: number; breakdown?: Record<string, number>; missing?: boolean } | undefined;
  try { parsed = run.exitCode === 0 ? JSON.parse(last) : undefined; } catch { parsed = undefined; }
  if (!parsed) {
    throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, `task ${spec.id}: its grade() ${run.timedOut ? 'ran past its limit' : `failed (exit ${run.exitCode})`}, so it gave no score\n${outputTail(run)}`, {
      hint: 'a verifier fault, not a reward of 0: the sandbox needs python3, and grade() must run on this workspace',
    });
  }
  if (parsed.missing) return { score: 0, breakdown: {}, notes: 'Automated grading function missing' };
  return { score: Number(parsed.total ?? 0), breakdown: parsed.breakdown ?? {}, notes: '' };
}

/** `_summarize_transcript`: tool calls, their first results and the user's messages, one line each. */
export function summarizeTranscript(transcript: TranscriptEntry[]): string {
  const out: string[] = [];
  for (const e of transcript) {
    if (e.type !== 'message') continue;
    const msg = (e.message ?? {}) as { role?: string; content?: Record<string, unknown>[] };
    const content = msg.content ?? [];
    if (msg.role === 'assistant') {
      for (const item of content) if (item.type === 'toolCall') out.push(`Tool: ${String(item.name)}(${JSON.stringify(item.arguments ?? {})})`);
    } else if (msg.role === 'toolResult' && content.length) out.push(`Result: ${JSON.stringify(content[0]).slice(0, 200)}`);
    else if (msg.role === 'user' && content.length) out.push(`User: ${JSON.stringify(content[0])}`);
  }
  return out.join('\n');
}

/** `_build_judge_prompt`, word for word in its instructions. */
export function judgePromptOf(spec: PinchBenchSpec, summary: string): string {
  const rubric = spec.judgeRubric ?? spec.gradingCriteria.map((c) => `- ${c}`).join('\n');
  return [
    'You are a grading function. Your ONLY job is to output a single JSON object.\n',
    'CRITICAL RULES:',
    '- Do NOT use any tools (no Read, Write, exec, or any other tool calls)',
    '- Do NOT create files or run commands',
    '- Do NOT write any prose, explanation, or commentary outside the JSON',
    '- Respond with ONLY a JSON object — nothing else\n',
    'Be a strict evaluator. Reserve 1.0 for genuinely excellent performance. An average acceptable completion should score around 0.6-0.7. Deduct points for unnecessary steps, verbose output, and inefficient tool usage.\n',
    `## Task\n${spec.prompt}\n`,
    `## Expected Behavior\n${spec.expectedBehavior}\n`,
    `## Agent Transcript (summarized)\n${summary}\n`,
    `## Grading Rubric\n${rubric}\n`,
    'Score each criterion from 0.0 to 1.0.\n',
    'Respond with ONLY this JSON structure (no markdown, no code fences, no extra text):',
    '{"scores": {"criterion_name": 0.0}, "total": 0.0, "notes": "brief justification"}',
  ].join('\n');
}

/** The judge's reply read as `_parse_judge_response` and `_normalize_judge_response` read it. */
export function parseJudgeText(text: string): PartGrade | undefined {
  type Dict = Record<string, unknown>;
  const asDict = (c: string): Dict | undefined => { try { const v = JSON.parse(c) as unknown; return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined; } catch { return undefined; } };
  const fenced = /```json\s*([\s\S]*?)\s*```/.exec(text)?.[1];
  const candidates: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '{') { if (depth === 0) cur = ''; depth++; }
    if (depth > 0) cur += ch;
    if (ch === '}' && depth > 0) { depth--; if (depth === 0) candidates.push(cur); }
  }
  const dicts: Dict[] = candidates.flatMap((c) => { const d = asDict(c); return d ? [d] : []; });
  const parsed: Dict | undefined = (fenced !== undefined ? asDict(fenced) : undefined) ?? [...dicts].reverse().find((d) => 'scores' in d) ?? dicts[dicts.length - 1];
  if (!parsed) {
    const m = /(?:total|overall|final)\s*(?:score)?[:\s]*(0\.\d+|1\.0+)/i.exec(text);
    return m ? { score: Number(m[1]), breakdown: {}, notes: 'Score extracted from prose (JSON parse failed)' } : undefined;
  }
  const breakdown: Record<string, number> = {};
  const raw = (parsed.scores ?? parsed.criteria_scores) as Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(raw && typeof raw === 'object' ? raw : {})) {
    const n = v && typeof v === 'object' && 'score' in v ? Number((v as { score: unknown }).score) : typeof v === 'number' ? v : NaN;
    if (Number.isFinite(n)) breakdown[k] = n;
  }
  const total = typeof parsed.total === 'number' ? parsed.total : typeof parsed.score === 'number' ? parsed.score
    : Object.keys(breakdown).length ? Object.values(breakdown).reduce((a, b) => a + b, 0) / Object.keys(breakdown).length : undefined;
  if (total === undefined) return undefined;
  return { score: total, breakdown, notes: String(parsed.notes ?? parsed.justification ?? '') };
}

/** Ask the judge; a reply it cannot read is a judge failure (a verifier fault), never a 0. */
export async function gradeByJudge(judge: PinchJudge, spec: PinchBenchSpec, transcript: TranscriptEntry[]): Promise<PartGrade> {
  const res = await fetch(`${judge.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(judge.apiKey ? { authorization: `Bearer ${judge.apiKey}` } : {}) },
    body: JSON.stringify({ model: judge.model, messages: [{ role: 'user', content: judgePromptOf(spec, summarizeTranscript(transcript)) }], temperature: 0 }),
    signal: AbortSignal.timeout(judge.timeoutMs ?? 180_000),
  }).catch((err: unknown) => { throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the PinchBench judge at ${judge.baseUrl} could not be reached: ${(err as Error).message}`); });
  const body = await res.text();
  if (!res.ok) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the PinchBench judge answered ${res.status}: ${body.slice(0, 300)}`);
  const text = String((JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content ?? '');
  const got = parseJudgeText(text);
  if (!got) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the PinchBench judge's reply has no score: ${text.slice(0, 300)}`);
  return got;
}

/** `_combine_grades`: the weighted mean of the two parts (weights summing to 0 count as 0.5 and 0.5). */
export function combineGrades(spec: PinchBenchSpec, auto: PartGrade, judged: PartGrade): PartGrade {
  let { automated: a, llmJudge: j } = spec.weights;
  if (a + j <= 0) { a = 0.5; j = 0.5; }
  const breakdown = Object.fromEntries([
    ...Object.entries(auto.breakdown).map(([k, v]) => [`automated.${k}`, v]),
    ...Object.entries(judged.breakdown).map(([k, v]) => [`llm_judge.${k}`, v]),
  ]);
  return { score: (auto.score * a + judged.score * j) / (a + j), breakdown, notes: [auto.notes, judged.notes].filter(Boolean).join(' | ') };
}
