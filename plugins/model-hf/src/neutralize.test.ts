import { settle } from '@clawgym/core';
import { LookAlikes, Neutralizer } from './neutralize';

describe('Neutralizer', () => {
  const looks = new LookAlikes(['<|im_end|>', '<tool_call>']);
  // Typed placeholders are numbered by the tokens longest first.
  const imEnd = looks.placeholder('<|im_end|>')!;
  const toolCall = looks.placeholder('<tool_call>')!;

  it('replaces look-alikes in settled values at every use, and shares settled values without any', () => {
    const clean = new WeakSet<object>();
    const plain = settle({ role: 'tool', content: 'total 8\nfile.txt' });
    const marked = settle({ role: 'tool', content: 'a <|im_end|> b' });
    for (let i = 0; i < 3; i++) {
      const n = new Neutralizer(looks, [], clean);
      const [p, m] = n.apply([plain, marked]);
      expect(p).toBe(plain); // nothing to replace: the same object
      expect(m).not.toBe(marked);
      expect(m!.content).toBe(`a ${imEnd} b`);
      expect(n.restore(m!.content)).toBe('a <|im_end|> b');
    }
    expect(clean.has(plain)).toBe(true);
    expect(clean.has(marked)).toBe(false);
  });

  it('walks values that are not settled every time (they may change)', () => {
    const clean = new WeakSet<object>();
    const value = { content: 'fine' };
    expect(new Neutralizer(looks, [], clean).apply(value)).toBe(value);
    value.content = 'now <tool_call>';
    expect(new Neutralizer(looks, [], clean).apply(value).content).toBe(`now ${toolCall}`);
  });

  it('gives every occurrence of one token the same placeholder, which the template\'s literals get too', () => {
    const n = new Neutralizer(looks, []);
    const s = n.apply('<tool_call>x<tool_call>y<|im_end|>');
    expect(s).toBe(`${toolCall}x${toolCall}y${imEnd}`);
    expect(looks.hide('<tool_call>')).toBe(toolCall);
    expect(s.split(looks.hide('<tool_call>'))).toEqual(['', 'x', `y${imEnd}`]);
    expect(n.restore(s)).toBe('<tool_call>x<tool_call>y<|im_end|>');
  });

  it('hides the private characters placeholders are made of, one placeholder per occurrence', () => {
    const n = new Neutralizer(looks, []);
    const text = `${imEnd} is not a placeholder here \uE000`;
    const s = n.apply(text);
    expect(s).not.toContain(imEnd);
    expect(n.restore(s)).toBe(text);
  });

  it('plain: leaves the look-alikes in and records them; a settled value holding them is not clean', () => {
    const clean = new WeakSet<object>();
    const marked = settle({ content: 'a <|im_end|> b' });
    const n = new Neutralizer(looks, [], clean, true);
    expect(n.apply(marked)).toBe(marked);
    expect([...n.found]).toEqual(['<|im_end|>']);
    expect(n.met).toBe(true);
    expect(clean.has(marked)).toBe(false);
  });
});
