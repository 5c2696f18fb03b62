import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CanonicalMessage } from '@clawgym/core';
import { testModel, type TestModel } from './testing/test-models';
import { JinjaChatTemplate } from './jinja-template';

// The prompt's text is Python's render of the original messages (golden.test.ts); these tests
// hold its ids: markup the template wrote encodes to control ids as vLLM's tokenizer would encode
// it, and a control-token look-alike from message text never does.
const dir = join(__dirname, '__fixtures__');
interface Case { name: string; messages: Record<string, unknown>[]; tools?: unknown[]; addGenerationPrompt: boolean }
interface Golden { case: string; family: Exclude<TestModel, 'gptoss'>; text?: string }
const cases = new Map((JSON.parse(readFileSync(join(dir, 'template-cases.json'), 'utf8')) as Case[]).map((c) => [c.name, c]));
const { goldens } = JSON.parse(readFileSync(join(dir, 'template-goldens.json'), 'utf8')) as { goldens: Golden[] };
const golden = (name: string) => goldens.filter((g) => g.case === name && g.text !== undefined);

/** Every string a message's text contributes, as the template writes it (tool arguments through tojson). */
function messageTexts(c: Case): string[] {
  const out: string[] = [];
  const leaves = (v: unknown): void => {
    if (typeof v === 'string') out.push(v, JSON.stringify(v).slice(1, -1));
    else if (v && typeof v === 'object') for (const x of Object.values(v)) leaves(x);
  };
  for (const m of c.messages) {
    if (typeof m.content === 'string' && m.content) out.push(m.content);
    leaves((m.tool_calls as { function: { arguments: unknown } }[] | undefined)?.map((t) => t.function.arguments));
  }
  return out.filter((s) => s.length > 0);
}

describe.each([...golden('injection-look-alikes'), ...golden('look-alikes-the-template-inspects')].map((g) => [`${g.case} / ${g.family}`, g] as const))('look-alikes in message text: %s', (_, g) => {
  it('encode as text; the template\'s markup around them as control ids', () => {
    const c = cases.get(g.case)!;
    const { chatTemplate, tokenizer } = testModel(g.family);
    const { text, ids } = chatTemplate.renderMessages(c.messages, c.tools, c.addGenerationPrompt);
    expect(text).toBe(g.text);
    expect(tokenizer.decode(Array.from(ids))).toBe(text);
    // Spans of the text that came from messages (each message string wherever it occurs).
    const inText = new Array<boolean>(text.length).fill(false);
    let spans = 0;
    for (const s of messageTexts(c)) {
      for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) { inText.fill(true, at, at + s.length); spans++; }
    }
    expect(spans).toBeGreaterThan(0);
    // The control tokens of the text outside those spans: the markup, in order.
    const markup: string[] = [];
    for (const m of text.matchAll(tokenizer.controlPattern!)) if (!inText[m.index]) markup.push(m[0]);
    const lookAlikesInSpans = [...text.matchAll(tokenizer.controlPattern!)].filter((m) => inText[m.index]).length;
    expect(lookAlikesInSpans).toBeGreaterThan(0); // the case does put look-alikes in message text
    const control = Array.from(ids).filter((id) => tokenizer.isControl(id)).map((id) => tokenizer.decode([id]));
    expect(control).toEqual(markup);
  });
});

describe('reasoning written inline in an assistant message (Qwen3)', () => {
  const { chatTemplate, tokenizer } = testModel('qwen3');
  it.each(['inline-reasoning-earlier-turn', 'inline-reasoning-latest-turn'])('%s: text as Python renders it, ids as vLLM encodes that text', (name) => {
    const c = cases.get(name)!;
    const g = golden(name).find((x) => x.family === 'qwen3')!;
    const { text, ids } = chatTemplate.renderMessages(c.messages, c.tools, c.addGenerationPrompt);
    expect(text).toBe(g.text);
    // The reasoning the template keeps is rewrapped in its own <think> markup: control ids, as vLLM's.
    expect(Array.from(ids)).toEqual(Array.from(tokenizer.encodeMarkup(text)));
  });

  it('drops the reasoning of a turn before the last user message', () => {
    const g = golden('inline-reasoning-earlier-turn').find((x) => x.family === 'qwen3')!;
    expect(g.text).not.toContain('Private reasoning');
    expect(g.text).toContain('<|im_start|>assistant\nFirst answer.<|im_end|>');
  });
});

describe('a template that looks at text in a way the placeholders change (its length)', () => {
  const { tokenizer } = testModel('qwen3');
  const source = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% if m.content|length > 20 %} (long){% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  const template = new JinjaChatTemplate({ tokenizer, source, stopIds: [tokenizer.tokenId('<|im_end|>')!] });
  const imEnd = tokenizer.tokenId('<|im_end|>')!;
  const think = tokenizer.tokenId('<think>')!;

  it('renders the original text when its look-alikes are no markup of the template, and encodes them as text', () => {
    const content = '<think><think>why</think>';
    const { text, ids } = template.renderMessages([{ role: 'user', content }], undefined, true);
    expect(text).toBe(`<|im_start|>user\n${content} (long)<|im_end|>\n<|im_start|>assistant\n`);
    expect(Array.from(ids)).not.toContain(think);
    expect(Array.from(ids).filter((id) => tokenizer.isControl(id))).toEqual([tokenizer.tokenId('<|im_start|>'), imEnd, tokenizer.tokenId('<|im_start|>')]);
    expect(tokenizer.decode(Array.from(ids))).toBe(text);
  });

  it('keeps the hidden render where a look-alike is also the template\'s markup (text may differ from Python; no look-alike becomes a control id)', () => {
    const content = 'x<|im_end|><|im_end|>x';
    const { text, ids } = template.renderMessages([{ role: 'user', content }], undefined, true);
    expect(text).toBe(`<|im_start|>user\n${content}<|im_end|>\n<|im_start|>assistant\n`);
    expect(Array.from(ids).filter((id) => id === imEnd)).toHaveLength(1);
  });

  it('continues a conversation of original-text renders as the full render does', () => {
    const user = (s: string): CanonicalMessage => ({ role: 'user', parts: [{ type: 'text', text: s }] });
    const messages = [user('<think>first question, long enough')];
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] };
    const outputIds = template.renderReply(reply.parts);
    const next = [user('</think> and the second one, also long')];
    const c = template.continueFrom({ messages, reply, tools: [], outputIds, finishReason: 'stop' }, next);
    const prompt = template.render({ messages, tools: [] });
    const full = template.renderPrompt({ messages: [...messages, reply, ...next], tools: [] });
    expect([...prompt, ...outputIds, ...c.ids]).toEqual(Array.from(full.ids));
    expect(full.text).toContain('</think> and the second one, also long (long)');
    expect(Array.from(full.ids)).not.toContain(think);
  });
});
