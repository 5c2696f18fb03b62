import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { wireAdapters } from '@clawgym/core';
import { testModel, type TestModel } from './testing/test-models';

// Goldens: Python's jinja2 in Hugging Face's environment (scripts/template-goldens.py, Debian
// python3-jinja2) over the cases of scripts/template-cases.ts — the four real CLIs' recorded
// requests and hand-made edge cases. OpenAI Chat requests were mapped to template messages by the
// Python script itself, the way vLLM's server maps them.
const dir = join(__dirname, '__fixtures__');
interface Case { name: string; messages: unknown[]; tools?: unknown[]; addGenerationPrompt: boolean; kwargs?: Record<string, unknown>; openaiRequest?: unknown }
interface Golden { case: string; family: Exclude<TestModel, 'gptoss'>; mappedBy: string; text?: string; error?: string }
const cases = new Map((JSON.parse(readFileSync(join(dir, 'template-cases.json'), 'utf8')) as Case[]).map((c) => [c.name, c]));
const { goldens } = JSON.parse(readFileSync(join(dir, 'template-goldens.json'), 'utf8')) as { goldens: Golden[] };

describe.each(goldens.map((g) => [`${g.case} / ${g.family}`, g] as const))('golden %s', (_, g) => {
  const c = cases.get(g.case)!;
  const { chatTemplate } = testModel(g.family, c.kwargs);

  it('renders byte for byte as Python\'s apply_chat_template', () => {
    const render = () => chatTemplate.renderMessages(c.messages, c.tools, c.addGenerationPrompt).text;
    if (g.error !== undefined) expect(render).toThrow(g.error);
    else expect(render()).toBe(g.text);
  });

  if (c.openaiRequest) {
    it('maps the OpenAI Chat request to template messages as vLLM does (wire parser → canonical → template)', () => {
      const { conversation } = wireAdapters['openai-chat'].parse(c.openaiRequest);
      expect(chatTemplate.renderPrompt(conversation, c.addGenerationPrompt).text).toBe(g.text);
    });
  }
});

it('covers every shipped template and the four CLIs', () => {
  expect(new Set(goldens.map((g) => g.family))).toEqual(new Set(['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3']));
  for (const h of ['claude-code', 'openclaw', 'codex', 'qwen-code']) expect(goldens.some((g) => g.case.startsWith(h) && g.text)).toBe(true);
});
