import fc from 'fast-check';
import { eventsToMessage, type OutputEvent, type ToolSpec } from '@clawgym/core';
import { loadModelFolder } from '../folder';
import { HfTokenizer } from '../hf-tokenizer';
import { testModel, testModelDir } from '../testing/test-models';
import { deepseekParser } from './deepseek';
import { harmonyParser } from './harmony';
import { hermesParser } from './hermes';
import { qwen3CoderParser } from './qwen3-coder';
import { idStreamParser, type TextParserFactory } from './types';

// Each family's output, hand-built from its published format, encoded with the family's real
// tokenizer (markup as control ids), fed one id at a time as an engine streams it.
const qwen = testModel('qwen3').tokenizer;
const deepseek = testModel('deepseek_v3').tokenizer;
const gptossFolder = loadModelFolder(testModelDir('gptoss'));
const gptoss = new HfTokenizer(gptossFolder.tokenizerJson, gptossFolder.tokenizerConfig, '');
const tools: ToolSpec[] = [{ name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' }, lines: { type: 'integer' }, force: { type: 'boolean' }, meta: { type: 'object' } } } }];

/** Feed `text` (encoded as the model would write it) id by id; the events after each id. */
function stream(tok: HfTokenizer, factory: TextParserFactory, text: string, stop: number[] = []) {
  const ids = Array.from(tok.encodeMarkup(text));
  const p = idStreamParser(tok.streamDecoder(), factory({ tools }), new Set(stop));
  const steps = ids.map((id) => p.push(id));
  const end = p.end();
  const all: OutputEvent[] = [...steps.flat(), ...end];
  return { ids, steps, end, message: eventsToMessage(all) };
}
/** Index of the id after which the first event of `type` came out. */
const firstAt = (steps: OutputEvent[][], type: OutputEvent['type']) => steps.findIndex((evs) => evs.some((e) => e.type === type));
const strip = (m: ReturnType<typeof eventsToMessage>) => m.parts.map((p) => (p.type === 'tool_call' ? { type: p.type, name: p.name, arguments: p.arguments } : p));

describe('Hermes / Qwen3', () => {
  const out = '<think>\nThe user wants a file.\n</think>\n\nI will write it.\n<tool_call>\n{"name": "write", "arguments": {"path": "a.txt", "lines": 2}}\n</tool_call>\n<tool_call>\n{"name": "write", "arguments": {"path": "b.txt"}}\n</tool_call>';
  it('streams reasoning, then text, then each call as it closes', () => {
    const { ids, steps, end, message } = stream(qwen, hermesParser, out);
    expect(strip(message)).toEqual([
      { type: 'thinking', text: 'The user wants a file.' },
      { type: 'text', text: 'I will write it.' },
      { type: 'tool_call', name: 'write', arguments: '{"path":"a.txt","lines":2}' },
      { type: 'tool_call', name: 'write', arguments: '{"path":"b.txt"}' },
    ]);
    const closeFirst = ids.indexOf(151658);
    expect(firstAt(steps, 'thinking')).toBeLessThan(firstAt(steps, 'text'));
    expect(firstAt(steps, 'text')).toBeLessThan(closeFirst);
    expect(firstAt(steps, 'tool_call')).toBe(closeFirst);
    expect(end).toEqual([]);
  });

  it('round-trips the template\'s own rendering of a reply', () => {
    const { chatTemplate } = testModel('qwen3');
    const parts = [{ type: 'thinking' as const, text: 'hmm\nok' }, { type: 'text' as const, text: 'Sure — 好的 🙂' }, { type: 'tool_call' as const, id: 'x', name: 'write', arguments: '{"path":"c.txt","meta":{"k":[1,2]}}' }];
    expect(strip(chatTemplate.parse(chatTemplate.renderReply(parts, tools), tools))).toEqual(parts.map((p) => (p.type === 'tool_call' ? { type: p.type, name: p.name, arguments: p.arguments } : p)));
  });

  it('gives malformed calls back as the text the model wrote', () => {
    expect(strip(stream(qwen, hermesParser, 'a<tool_call>\n{"name": oops}\n</tool_call>').message)).toEqual([{ type: 'text', text: 'a<tool_call>\n{"name": oops}\n</tool_call>' }]);
    expect(strip(stream(qwen, hermesParser, 'b<tool_call>\n{"name": "write", "argu').message)).toEqual([{ type: 'text', text: 'b<tool_call>\n{"name": "write", "argu' }]);
    expect(strip(stream(qwen, hermesParser, '<think>never closed').message)).toEqual([{ type: 'thinking', text: 'never closed' }]);
  });
});

describe('DeepSeek-V3', () => {
  const out = 'Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n{"path": "a.txt"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n{"path": "b.txt", "force": true}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
  it('streams text and each call as it closes', () => {
    const { ids, steps, message } = stream(deepseek, deepseekParser, out);
    expect(strip(message)).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_call', name: 'write', arguments: '{"path":"a.txt"}' },
      { type: 'tool_call', name: 'write', arguments: '{"path":"b.txt","force":true}' },
    ]);
    expect(firstAt(steps, 'tool_call')).toBe(ids.indexOf(128809));
    expect(firstAt(steps, 'text')).toBeLessThan(ids.indexOf(128806));
  });
  it('reads V3.1\'s `NAME<｜tool▁sep｜>ARGS` form and gives malformed calls back as text', () => {
    expect(strip(stream(deepseek, deepseekParser, '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write<｜tool▁sep｜>{"path": "x"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>').message))
      .toEqual([{ type: 'tool_call', name: 'write', arguments: '{"path":"x"}' }]);
    expect(strip(stream(deepseek, deepseekParser, '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n{bad\n```<｜tool▁call▁end｜>').message))
      .toEqual([{ type: 'text', text: '<｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n{bad\n```<｜tool▁call▁end｜>' }]);
  });
});

describe('Qwen3-Coder XML', () => {
  const out = '<think>\nplan\n</think>\n\nWriting.\n<tool_call>\n<function=write>\n<parameter=path>\nsrc/a b.ts\n</parameter>\n<parameter=lines>\n12\n</parameter>\n<parameter=force>\ntrue\n</parameter>\n<parameter=meta>\n{"k": [1, "x"]}\n</parameter>\n</function>\n</tool_call>';
  it('types parameter values by the tool\'s schema and emits the call when it closes', () => {
    const { ids, steps, message } = stream(qwen, qwen3CoderParser, out);
    expect(strip(message)).toEqual([
      { type: 'thinking', text: 'plan' },
      { type: 'text', text: 'Writing.' },
      { type: 'tool_call', name: 'write', arguments: '{"path":"src/a b.ts","lines":12,"force":true,"meta":{"k":[1,"x"]}}' },
    ]);
    expect(firstAt(steps, 'tool_call')).toBe(ids.lastIndexOf(151658));
  });
  it('gives a call with stray text or no function back as text', () => {
    expect(strip(stream(qwen, qwen3CoderParser, '<tool_call>\n<function=write>\nstray\n</function>\n</tool_call>').message)[0]).toMatchObject({ type: 'text' });
    expect(strip(stream(qwen, qwen3CoderParser, '<tool_call>\n{"name": "write"}\n</tool_call>').message)[0]).toMatchObject({ type: 'text' });
  });
});

describe('gpt-oss harmony', () => {
  // The generation prompt ends with `<|start|>assistant`; `<|call|>` and `<|return|>` are stop ids (200012, 200002).
  it('maps analysis to reasoning, a commentary message to functions.* to a call, and final to text', () => {
    const call = '<|channel|>analysis<|message|>Need to write a file.<|end|><|start|>assistant<|channel|>commentary to=functions.write <|constrain|>json<|message|>{"path": "a.txt"}<|call|>';
    const a = stream(gptoss, harmonyParser, call, [200012, 200002]);
    expect(strip(a.message)).toEqual([{ type: 'thinking', text: 'Need to write a file.' }, { type: 'tool_call', name: 'write', arguments: '{"path":"a.txt"}' }]);
    expect(firstAt(a.steps, 'thinking')).toBeLessThan(a.ids.indexOf(200007));
    const final = stream(gptoss, harmonyParser, '<|channel|>analysis<|message|>Done.<|end|><|start|>assistant<|channel|>final<|message|>Wrote a.txt.<|return|>', [200012, 200002]);
    expect(strip(final.message)).toEqual([{ type: 'thinking', text: 'Done.' }, { type: 'text', text: 'Wrote a.txt.' }]);
    expect(firstAt(final.steps, 'text')).toBeLessThan(final.ids.length - 1);
  });
  it('reads a recipient written before the channel, and keeps a bad call body as text', () => {
    const a = stream(gptoss, harmonyParser, ' to=functions.write<|channel|>commentary json<|message|>{"path": "b"}<|call|>', [200012]);
    expect(strip(a.message)).toEqual([{ type: 'tool_call', name: 'write', arguments: '{"path":"b"}' }]);
    expect(strip(stream(gptoss, harmonyParser, '<|channel|>commentary to=functions.write<|message|>{oops', [200012]).message)).toEqual([{ type: 'text', text: '{oops' }]);
  });
});

it('never throws on random output, in any family', () => {
  const cases: [HfTokenizer, TextParserFactory][] = [[qwen, hermesParser], [qwen, qwen3CoderParser], [deepseek, deepseekParser], [gptoss, harmonyParser]];
  for (const [tok, factory] of cases) {
    const control = [...tok.control.values()].slice(0, 40);
    fc.assert(fc.property(fc.array(fc.oneof(fc.constantFrom(...control), fc.integer({ min: 0, max: 5000 })), { maxLength: 60 }), (ids) => {
      const p = idStreamParser(tok.streamDecoder(), factory({ tools }), new Set());
      const events = [...ids.flatMap((id) => p.push(id)), ...p.end()];
      expect(Array.isArray(eventsToMessage(events).parts)).toBe(true);
    }), { numRuns: 150 });
  }
});

it('gives the same message for ids pushed at once (a JSON response) as for ids pushed one by one (a stream), in any family', () => {
  const cases: [HfTokenizer, TextParserFactory, string][] = [[qwen, hermesParser, 'qwen3'], [qwen, qwen3CoderParser, 'qwen3-coder'], [deepseek, deepseekParser, 'deepseek'], [gptoss, harmonyParser, 'gpt-oss']];
  const message = (events: OutputEvent[]) => strip(eventsToMessage(events));
  const written: Record<string, string[]> = {
    'qwen3': ['<think>\nplan it\n</think>\n\nDone 你好 🙂.\n<tool_call>\n{"name": "write", "arguments": {"path": "a.txt"}}\n</tool_call>', '<tool_call>\n{bad\n</tool_call>'],
    'qwen3-coder': ['Writing.\n<tool_call>\n<function=write>\n<parameter=path>\na b.ts\n</parameter>\n<parameter=lines>\n12\n</parameter>\n</function>\n</tool_call>'],
    'deepseek': ['Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write\n```json\n{"path": "a.txt"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'],
    'gpt-oss': ['<|channel|>analysis<|message|>Need a file.<|end|><|start|>assistant<|channel|>commentary to=functions.write <|constrain|>json<|message|>{"path": "a.txt"}<|call|>'],
  };
  let compared = 0;
  for (const [tok, factory, name] of cases) {
    const control = [...tok.control.values()].slice(0, 40);
    const stop = [...tok.control.values()][0]!;
    const check = (ids: number[], cut: number) => {
      const one = idStreamParser(tok.streamDecoder(), factory({ tools }), new Set([stop]));
      const byOne = [...ids.flatMap((id) => one.push(id)), ...one.end()];
      const many = idStreamParser(tok.streamDecoder(), factory({ tools }), new Set([stop]));
      const at = Math.min(cut, ids.length);
      const byMany = [...many.pushMany!(ids.slice(0, at)), ...many.pushMany!(ids.slice(at)), ...many.end()];
      expect(message(byMany)).toEqual(message(byOne));
      compared++;
    };
    for (const text of written[name]!) { const ids = Array.from(tok.encodeMarkup(text)); check(ids, ids.length); check(ids, 7); }
    fc.assert(fc.property(fc.array(fc.oneof(fc.constantFrom(...control, stop), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: tok.vocabSize - 1 })), { maxLength: 60 }), fc.nat(60), check), { numRuns: 200 });
  }
  expect(compared).toBeGreaterThan(800);
});
