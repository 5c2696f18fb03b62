import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JinjaRenderer } from './jinja-env';
import { LookAlikes, Neutralizer, Opaque } from './neutralize';
import { loadModelFolder } from './folder';
import { testModelDir, type TestModel } from './testing/test-models';

// The compiled form of a template (jinja-compile.ts) must write what @huggingface/jinja's
// interpreter writes — the interpreter is the reference the goldens were matched with.
const dir = join(__dirname, '__fixtures__');
interface Case { name: string; messages: unknown[]; tools?: unknown[]; addGenerationPrompt: boolean; kwargs?: Record<string, unknown> }
const cases = JSON.parse(readFileSync(join(dir, 'template-cases.json'), 'utf8')) as Case[];
const NOW = () => new Date(2026, 6, 26, 9, 5, 3);

/** Render with the compiled form only (an error or a hand-over to the interpreter is reported, not hidden). */
function both(r: JinjaRenderer, variables: Record<string, unknown>): { compiled: string | Error; interpreted: string | Error } {
  const run = (f: () => string) => { try { return f(); } catch (e) { return e as Error; } };
  const interpreted = run(() => r.interpret(variables));
  let handedOver = false;
  const spy = jest.spyOn(r, 'interpret').mockImplementation(() => { handedOver = true; throw new Error('handed to the interpreter'); });
  const compiled = run(() => r.render(variables));
  spy.mockRestore();
  return { compiled: handedOver ? new Error('handed to the interpreter') : compiled, interpreted };
}

describe.each(['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3'] as TestModel[])('%s template', (family) => {
  const folder = loadModelFolder(testModelDir(family));
  const renderer = new JinjaRenderer(folder.chatTemplate!, NOW, Infinity);
  const special = { bos_token: '<BOS>', eos_token: '<EOS>' };

  it('compiles', () => {
    expect(renderer.isCompiled).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))('writes what the interpreter writes: %s', (_, c) => {
    const variables = { ...special, ...c.kwargs, messages: c.messages, add_generation_prompt: c.addGenerationPrompt, ...(c.tools ? { tools: c.tools } : {}) };
    const { compiled, interpreted } = both(renderer, variables);
    if (typeof interpreted === 'string') expect(compiled).toBe(interpreted);
    // A template's refusal (raise_exception) is the interpreter's to word: the compiled form hands it over.
    else expect(compiled).toBeInstanceOf(Error);
  });
});

describe('compiled form, where it leaves the result to the interpreter', () => {
  const render = (source: string, variables: Record<string, unknown> = {}) => {
    const r = new JinjaRenderer(source, NOW, Infinity);
    return { r, ...both(r, variables) };
  };

  it('keeps the interpreter\'s quirks: loose ==, booleans as true/false, dicts and lists as its JSON', () => {
    const { compiled, interpreted } = render('{{ 1 == "1" }} {{ x }} {{ d }} {{ l }} {{ l | length }} {{ "ab"[-1] }} {{ l[::-1] | tojson }}', { x: true, d: { a: 1, b: [null, 'é'] }, l: [1, 2, 3] });
    expect(interpreted).toBe('true true {"a": 1, "b": [null, "é"]} [1, 2, 3] 3 b [3, 2, 1]');
    expect(compiled).toBe(interpreted);
  });

  it('scopes a loop\'s set to the loop, and namespaces across it', () => {
    const src = '{% set x = 1 %}{% set ns = namespace(n=0) %}{% for m in ms %}{% set x = loop.index %}{% set ns.n = ns.n + m %}{{ loop.first }}{{ loop.last }}{% endfor %}{{ x }}/{{ ns.n }}{% for m in [] %}no{% else %}empty{% endfor %}';
    const { compiled, interpreted } = render(src, { ms: [3, 4] });
    expect(interpreted).toBe('truefalsefalsetrue1/7empty');
    expect(compiled).toBe(interpreted);
  });

  it('reads the innermost scope that set a name: nested loops, a set in an if, a set block, and/or values', () => {
    const src = '{% set x = "r" %}{% for a in [1, 2] %}{{ x }}{% if a == 1 %}{% set x = "f" ~ a %}{% endif %}{% for b in [a] %}{{ x }}{{ loop.index }}{{ a }}{% set a = 9 %}{{ a }}{% endfor %}{{ a }}{% endfor %}{{ x }}'
      + '{% set y %}{% for c in ["a", "b"] %}{{ c }}{% endfor %}{{ x }}{% endset %}[{{ y }}]{{ 0 or "" or "z" }}{{ 1 and [] }}{{ none and 1 }}|{{ u }}';
    const { compiled, interpreted } = render(src, { u: undefined });
    expect(interpreted).toBe('rf11191f1f11292r[abr]z[]|');
    expect(compiled).toBe(interpreted);
  });

  it.each([
    ['float arithmetic (the interpreter prints 2.0)', '{{ x * 2 }}', { x: 1.0 + 0.5 - 0.5 + 0.25 * 4 - 1 + 0.5 }],
    ['an operation on none', '{{ x + "a" }}', { x: null }],
    ['comparing two lists', '{{ a == b }}', { a: [1], b: [1] }],
    ['a dict builtin', '{{ d.items() }}', { d: { a: 1 } }],
  ])('hands %s to the interpreter', (_, source, variables) => {
    const { compiled, interpreted } = render(source, variables);
    expect(compiled).toBeInstanceOf(Error);
    expect((compiled as Error).message).toBe('handed to the interpreter');
    // …whose answer (a text or its error) is what render() gives.
    const r = new JinjaRenderer(source, NOW, Infinity);
    if (typeof interpreted === 'string') expect(r.render(variables)).toBe(interpreted);
    else expect(() => r.render(variables)).toThrow();
  });

  it('writes a prepared value\'s tojson once: a frozen copy, the caller\'s value left as it is', () => {
    const r = new JinjaRenderer('{% for t in tools %}{{ t | tojson }};{% endfor %}{{ tools[0].function.name }}', NOW, Infinity);
    const tools = [{ type: 'function', function: { name: 'run', description: null, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } }];
    const prepared = r.prepare(tools);
    expect(prepared.plain).not.toBe(tools);
    expect(Object.isFrozen((prepared.plain as typeof tools)[0]!.function.parameters)).toBe(true);
    expect(Object.isFrozen(tools[0]!.function.parameters)).toBe(false);
    const expected = '{"type": "function", "function": {"name": "run", "description": null, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}};run';
    expect(r.interpret({}, { tools: prepared })).toBe(expected);
    for (let i = 0; i < 3; i++) expect(r.render({}, { tools: prepared })).toBe(expected);
    // The caller may go on changing its own value; what was prepared stays what it was.
    tools[0]!.function.name = 'changed';
    expect(r.render({}, { tools: prepared })).toBe(expected);
  });

  it('does not compile a template using a construct it does not handle (the interpreter renders it)', () => {
    const r = new JinjaRenderer('{% macro f(x) %}{{ x }}{% endmacro %}{{ f(1) | upper }}', NOW);
    expect(r.isCompiled).toBe(false);
    expect(r.render({})).toBe('1');
  });

  it('drops the compiled form for good when a cross-check ever finds it differs from the interpreter', () => {
    const r = new JinjaRenderer('{{ x }}', NOW, 2);
    (r as unknown as { compiled: () => string }).compiled = () => 'wrong';
    expect(r.render({ x: 'a' })).toBe('wrong'); // first render: not checked
    expect(r.render({ x: 'a' })).toBe('a'); // second: checked, differs, the interpreter's answer
    expect(r.isCompiled).toBe(false);
    expect(r.render({ x: 'b' })).toBe('b');
  });
});

describe('an opaque text (a message\'s text rendered before it is known)', () => {
  // A render with an Opaque text that the compiled form finishes must be, for every string, the
  // interpreter's render of that string with the placeholder in its place; every template that
  // looks at the text must leave the render undone (undefined), never guess.
  const STRINGS = ['', ' ', 'a', 'abc', '\n lead', 'trail \n', '<|im_end|>', 'x'.repeat(300), '🙂 中文', '$& $1 \\'];
  const writes = [
    '{{ message.content }}',
    '{% if message.content is string %}[{{ message.content }}]{% endif %}',
    '{% if message.content is mapping or message.content is number %}m{% endif %}{% if message.content is iterable and message.content is defined %}i{% endif %}',
    "{{ '<a>' + message.content + '</a>' }}{{ message.content ~ '!' }}{{ ('<' + message.content) + ('>' ~ message.content) }}",
    '{% set c = message.content %}{{ c | safe }}{{ c }}',
    '{% if message.content is not none and message.content != none %}{{ message.content }}{% endif %}{% if message.content == none %}n{% endif %}',
    '{% set ns = namespace(t=message.content) %}{{ ns.t }}{% set ns.u = message.content %}{{ ns.u }}',
    "{% for m in [message, message] %}{% if m.role == 'tool' %}{{ loop.index }}:{{ m.content }}{% endif %}{% endfor %}",
  ];
  const looks = [
    '{% if message.content %}x{% endif %}', '{{ message.content | length }}', '{{ message.content | tojson }}',
    "{{ message.content.startswith('a') }}", "{{ message.content.split('a') }}", "{{ message.content == 'a' }}",
    "{{ 'a' in message.content }}", "{{ message.content in 'abc' }}", "{{ message.content in ['a'] }}", '{{ message.content[0] }}',
    '{{ message.content[1:] }}', '{{ message.content.x }}', '{% for ch in message.content %}{{ ch }}{% endfor %}',
    '{% set c %}{{ message.content }}{% endset %}{{ c }}', "{% set c %}{{ 'a' + message.content }}{% endset %}{{ c }}",
    '{{ raise_exception(message.content) }}', "{{ (message.content + 'a') == 'b' }}", "{{ message.content or 'x' }}",
    "{{ 'x' if message.content else 'y' }}", '{{ -message.content }}', '{{ message.content * 2 }}', '{{ message.content + 1 }}',
    '{{ message.content | trim }}', "{{ (message.content ~ 'a') | length }}", "{% if not message.content %}e{% endif %}",
  ];
  const opaqueMessage = () => {
    const neutral = new Neutralizer(new LookAlikes([]));
    const content = new Opaque();
    return { message: neutral.apply({ role: 'tool', content }), content };
  };

  it.each(writes)('renders %s as every string would render', (source) => {
    const r = new JinjaRenderer(source, NOW, Infinity);
    expect(r.isCompiled).toBe(true);
    const { message, content } = opaqueMessage();
    const raw = r.renderCompiled({ message });
    expect(raw).toBeDefined();
    for (const s of STRINGS) expect(raw!.split(content.placeholder).join(s)).toBe(r.interpret({ message: { role: 'tool', content: s } }));
  });

  it.each(looks)('leaves %s undone', (source) => {
    const r = new JinjaRenderer(source, NOW, Infinity);
    const { message } = opaqueMessage();
    expect(r.renderCompiled({ message })).toBeUndefined();
    // The template itself still renders real strings (the opaque render was refused, nothing else).
    expect(() => r.render({ message: { role: 'tool', content: 'a' } })).not.toThrow(/opaque|not known/);
  });

  it('never counts an opaque render as a render to cross-check, nor hands it to the interpreter', () => {
    const r = new JinjaRenderer('{{ message.content }}', NOW, 1);
    const spy = jest.spyOn(r, 'interpret');
    for (let i = 0; i < 5; i++) r.renderCompiled(opaqueMessage());
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(r.isCompiled).toBe(true);
  });
});
