import type { Harness, OracleToolCall } from '../contracts/harness';
import type { CapturedRequest } from './request-capture';

/** A tool a recorded request offered: its name, declared properties and required ones. */
export interface OfferedTool { name: string; properties: string[]; required: string[] }

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? v as Json : {});

function toolOf(name: unknown, schema: unknown): OfferedTool | undefined {
  if (typeof name !== 'string') return undefined;
  const s = obj(schema);
  return { name, properties: Object.keys(obj(s.properties)), required: Array.isArray(s.required) ? s.required.map(String) : [] };
}

/**
 * The function tools a recorded request offered, in any wire format: Anthropic (`name`,
 * `input_schema`), Chat Completions (`function.parameters`), Responses (`name`, `parameters`)
 * and Gemini (`functionDeclarations[].parameters` or `parametersJsonSchema`).
 */
export function offeredTools(request: CapturedRequest | { body: unknown }): OfferedTool[] {
  const body = obj(typeof request.body === 'string' ? JSON.parse(request.body) : request.body);
  const out: OfferedTool[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    const tool = obj(t);
    if (Array.isArray(tool.functionDeclarations)) {
      for (const d of tool.functionDeclarations.map(obj)) {
        const found = toolOf(d.name, d.parametersJsonSchema ?? d.parameters);
        if (found) out.push(found);
      }
      continue;
    }
    const fn = tool.function ? obj(tool.function) : tool;
    const found = toolOf(fn.name, fn.parameters ?? fn.input_schema);
    if (found) out.push(found);
  }
  return out;
}

/** The four calls task oracles are written in (agentloop's vocabulary), with awkward values. */
export const ORACLE_VOCABULARY: OracleToolCall[] = [
  { name: 'read_file', arguments: { path: 'notes/in.txt' } },
  { name: 'write_file', arguments: { path: 'out.txt', content: "it's 1\n" } },
  { name: 'list_files', arguments: { path: '.' } },
  { name: 'bash', arguments: { command: 'grep -c x in.txt > count.txt' } },
];

/**
 * What is wrong with `harness`'s oracle calls against the tools its CLI really offered in
 * `request` (empty when nothing): each of the {@link ORACLE_VOCABULARY} calls, made with
 * `harness.oracleCall`, must name an offered tool, give each of its required arguments and no
 * argument it does not declare.
 */
export function oracleCallProblems(harness: Harness, request: CapturedRequest | { body: unknown }): string[] {
  const tools = new Map(offeredTools(request).map((t) => [t.name, t]));
  const problems: string[] = [];
  for (const call of ORACLE_VOCABULARY) {
    const made = harness.oracleCall ? harness.oracleCall(call) : call;
    const tool = tools.get(made.name);
    if (!tool) { problems.push(`${call.name} became ${made.name}, which ${harness.name} does not offer (it offers ${[...tools.keys()].join(', ')})`); continue; }
    const given = Object.keys(made.arguments);
    const missing = tool.required.filter((k) => !given.includes(k));
    const unknown = given.filter((k) => !tool.properties.includes(k));
    if (missing.length) problems.push(`${call.name} became ${made.name} without its required ${missing.join(', ')}`);
    if (unknown.length) problems.push(`${call.name} became ${made.name} with ${unknown.join(', ')}, which ${made.name} does not declare`);
  }
  return problems;
}
