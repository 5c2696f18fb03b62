import { ClawGymError, ErrorCodes, z, type Verdict } from '@clawgym/core';
import type { WorkspaceDocument } from './workspace-text';

/** An OpenAI-compatible chat endpoint for the rubric judge (`POST {baseUrl}/chat/completions`). */
export interface JudgeEndpoint {
  /** e.g. `https://api.example.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set (local servers often need none). */
  apiKey?: string;
  model: string;
  /** Per request (default 120 000). */
  timeoutMs?: number;
}

/** zod schema of {@link JudgeEndpoint}, for plugin options. */
export const JudgeEndpointSchema = z.strictObject({
  baseUrl: z.string().url(),
  apiKey: z.string().optional(),
  model: z.string().min(1),
  timeoutMs: z.number().int().positive().optional(),
});

/** One rubric item, scored 0 or 1 by the judge. */
export interface RubricItem { id: string; text: string }

/** What the judge is asked to grade. */
export interface JudgeRequest {
  instruction: string;
  rubric: RubricItem[];
  documents: WorkspaceDocument[];
  /** Reward at or above which the verdict passes (default 1: every item met). */
  passThreshold?: number;
}

const SYSTEM = [
  'You grade the work of an assistant on a workplace task against a rubric.',
  'You see the task, the rubric and the files of the assistant\'s final working folder.',
  'Score every rubric item 1 if the files clearly satisfy it, else 0. Judge only what is in the files.',
  'Answer with JSON only: {"scores": [{"id": "<item id>", "score": 0 or 1, "reason": "<one short sentence>"}]} with one entry per item.',
].join(' ');

/** The user message: task, numbered rubric, files. */
export function judgePrompt(req: JudgeRequest): string {
  const files = req.documents.map((d) => {
    const head = `=== FILE: ${d.path}${d.notes.length ? ` (${d.notes.join('; ')})` : ''} ===`;
    return d.text === undefined ? head : `${head}\n${d.text}`;
  });
  return [
    '# Task', req.instruction.trim(), '',
    '# Rubric', ...req.rubric.map((r) => `- [${r.id}] ${r.text}`), '',
    '# Files of the final working folder', files.length ? files.join('\n\n') : '(the folder is empty)',
  ].join('\n');
}

const Reply = z.object({
  scores: z.array(z.object({
    id: z.union([z.string(), z.number()]).transform(String),
    score: z.union([z.number(), z.boolean()]).transform((s) => (Number(s) >= 0.5 ? 1 : 0)),
    reason: z.string().optional(),
  })),
});

/** Parse the judge's reply (JSON, possibly in a code fence or with prose around it). */
export function parseJudgeReply(content: string, rubric: RubricItem[]): Map<string, { score: number; reason?: string }> {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end < start) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `no JSON object in the judge's reply: ${content.slice(0, 200)}`);
  const parsed = Reply.safeParse(JSON.parse(content.slice(start, end + 1)));
  if (!parsed.success) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the judge's reply is not {"scores": [...]}: ${parsed.error.message.slice(0, 300)}`);
  const byId = new Map(parsed.data.scores.map((s) => [s.id.replace(/^\[|\]$/g, ''), s]));
  const missing = rubric.filter((r) => !byId.has(r.id)).map((r) => r.id);
  if (missing.length) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the judge gave no score for rubric item(s) ${missing.join(', ')}`);
  return byId;
}

async function ask(endpoint: JudgeEndpoint, user: string): Promise<string> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) },
    body: JSON.stringify({ model: endpoint.model, temperature: 0, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: user }] }),
    signal: AbortSignal.timeout(endpoint.timeoutMs ?? 120_000),
  });
  const text = await res.text();
  if (!res.ok) throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `${url} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
  const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `${url} answered without choices[0].message.content`);
  return content;
}

/**
 * Grade with a judge model: one request per verification (retried once on an unusable
 * answer), reward = mean of the 0/1 item scores. Throws a {@link ClawGymError} when no endpoint
 * is configured or the judge cannot be used, so a broken judge never reads as a failed agent.
 */
export async function judgeRubric(endpoint: JudgeEndpoint | undefined, req: JudgeRequest): Promise<Verdict> {
  if (!endpoint) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, 'JobBench tasks are graded by a rubric judge, and no judge endpoint is configured', {
      hint: 'give the suite a judge: { baseUrl: "https://…/v1", apiKey, model } (plugin option "judge" of @clawgym/task-jobbench, or jobbenchDir(root, judge))',
    });
  }
  if (req.rubric.length === 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, 'the task has an empty rubric: nothing to grade');
  const user = judgePrompt(req);
  let lastError: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    let scores: Map<string, { score: number; reason?: string }>;
    try {
      scores = parseJudgeReply(await ask(endpoint, user), req.rubric);
    } catch (e) {
      lastError = e;
      continue;
    }
    const met = req.rubric.filter((r) => scores.get(r.id)!.score === 1).length;
    const reward = met / req.rubric.length;
    const line = (r: RubricItem) => `${scores.get(r.id)!.score ? '✓' : '✗'} [${r.id}] ${r.text}${scores.get(r.id)!.reason ? ` — ${scores.get(r.id)!.reason}` : ''}`;
    return {
      reward,
      pass: reward >= (req.passThreshold ?? 1),
      details: `${met}/${req.rubric.length} rubric items met (judge ${endpoint.model})\n${req.rubric.map(line).join('\n')}`,
    };
  }
  throw new ClawGymError(ErrorCodes.JUDGE_FAILED, `the rubric judge (${endpoint.model} at ${endpoint.baseUrl}) could not grade: ${(lastError as Error).message}`, { cause: lastError });
}
