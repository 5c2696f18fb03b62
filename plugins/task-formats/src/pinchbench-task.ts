/**
 * A PinchBench task file (`tasks/task_*.md` of pinchbench/skill): YAML front matter (`id`,
 * `name`, `category`, `grading_type`, `timeout_seconds`, `workspace_files`, `grading_weights`,
 * `multi_session`) and `## ` sections (`Prompt`, `Expected Behavior`, `Grading Criteria`,
 * `Automated Checks` with a ```python block defining `grade(transcript, workspace_path)`,
 * `LLM Judge Rubric`), parsed as its `scripts/lib_tasks.py` parses them.
 */
import { load as loadYaml } from 'js-yaml';
import { ClawGymError, ErrorCodes } from '@clawgym/core';

const invalid = (message: string, cause?: unknown) => new ClawGymError(ErrorCodes.TASK_INVALID, message, cause === undefined ? {} : { cause });

export type GradingType = 'automated' | 'llm_judge' | 'hybrid';

/** A file the task lays into the workspace: inline text, or a file of the repository's assets/. */
export type WorkspaceFile = { path: string; content: string } | { source: string; dest: string };

export interface PinchBenchSpec {
  id: string;
  name: string;
  category: string;
  gradingType: GradingType;
  timeoutSeconds: number;
  workspaceFiles: WorkspaceFile[];
  prompt: string;
  expectedBehavior: string;
  gradingCriteria: string[];
  /** The Python of the `Automated Checks` section's first ```python block. */
  gradingCode?: string;
  judgeRubric?: string;
  /** `grading_weights` (lib_grading's default for hybrid tasks: 0.5 and 0.5). */
  weights: { automated: number; llmJudge: number };
  multiSession: boolean;
  frontmatter: Record<string, unknown>;
}

/** The `## ` sections of a body, by title. */
function sections(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let title: string | undefined;
  let lines: string[] = [];
  for (const line of body.split('\n')) {
    const m = /^##\s+(.+)$/.exec(line);
    if (m) {
      if (title !== undefined) out.set(title, lines.join('\n').trim());
      title = m[1]!;
      lines = [];
    } else if (title !== undefined) lines.push(line);
  }
  if (title !== undefined) out.set(title, lines.join('\n').trim());
  return out;
}

const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** Parse a task file; throws a ClawGymError (TASK_INVALID) saying what is wrong. */
export function parsePinchBenchTask(text: string): PinchBenchSpec {
  const m = /^---\s*\n([\s\S]*?)\n---\s*\n([\s\S]*)$/.exec(text);
  if (!m) throw invalid('no YAML front matter (--- … ---) at the top');
  let meta: unknown;
  try { meta = loadYaml(m[1]!); } catch (e) { throw invalid(`its front matter is not valid YAML: ${(e as Error).message.split('\n')[0]}`, e); }
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) throw invalid('its front matter is not a YAML mapping');
  const fm = meta as Record<string, unknown>;
  const s = sections(m[2]!);
  const gradingType = (fm.grading_type ?? 'automated') as GradingType;
  if (!['automated', 'llm_judge', 'hybrid'].includes(gradingType)) throw invalid(`grading_type ${JSON.stringify(fm.grading_type)} is none of automated, llm_judge, hybrid`);
  const files = Array.isArray(fm.workspace_files) ? fm.workspace_files : [];
  const workspaceFiles = files.map((f: unknown, i): WorkspaceFile => {
    const o = (f && typeof f === 'object' ? f : {}) as Record<string, unknown>;
    if (typeof o.content === 'string' && typeof o.path === 'string') return { path: o.path, content: o.content };
    if (typeof o.source === 'string' && typeof o.dest === 'string') return { source: o.source, dest: o.dest };
    throw invalid(`workspace_files[${i}] has neither path and content nor source and dest`);
  });
  const checks = s.get('Automated Checks');
  const code = checks ? /```python\s*([\s\S]*?)\s*```/.exec(checks)?.[1] : undefined;
  const w = (fm.grading_weights && typeof fm.grading_weights === 'object' ? fm.grading_weights : {}) as Record<string, unknown>;
  return {
    id: String(fm.id ?? ''),
    name: String(fm.name ?? ''),
    category: String(fm.category ?? ''),
    gradingType,
    timeoutSeconds: num(fm.timeout_seconds, 120),
    workspaceFiles,
    prompt: (s.get('Prompt') ?? '').trim(),
    expectedBehavior: (s.get('Expected Behavior') ?? '').trim(),
    gradingCriteria: (s.get('Grading Criteria') ?? '').split('\n').flatMap((l) => { const c = /^-\s+\[[ x]\]\s+(.+)$/.exec(l.trim()); return c ? [c[1]!] : []; }),
    ...(code ? { gradingCode: code } : {}),
    ...(s.has('LLM Judge Rubric') ? { judgeRubric: s.get('LLM Judge Rubric')! } : {}),
    weights: { automated: num(w.automated, 0.5), llmJudge: num(w.llm_judge, 0.5) },
    multiSession: fm.multi_session === true,
    frontmatter: fm,
  };
}
