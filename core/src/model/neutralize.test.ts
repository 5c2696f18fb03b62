import { settle } from '../util/settled';
import { lookAlikeRegex, Neutralizer } from './neutralize';

describe('Neutralizer', () => {
  const re = lookAlikeRegex(['<|im_end|>', '<tool_call>']);

  it('replaces look-alikes in settled values at every use, and shares settled values without any', () => {
    const clean = new WeakSet<object>();
    const plain = settle({ role: 'tool', content: 'total 8\nfile.txt' });
    const marked = settle({ role: 'tool', content: 'a <|im_end|> b' });
    for (let i = 0; i < 3; i++) {
      const n = new Neutralizer(re, [], clean);
      const [p, m] = n.apply([plain, marked]);
      expect(p).toBe(plain); // nothing to replace: the same object
      expect(m).not.toBe(marked);
      expect(m!.content).toBe('a \uE0000\uE001 b');
      expect(n.restore(m!.content)).toBe('a <|im_end|> b');
    }
    expect(clean.has(plain)).toBe(true);
    expect(clean.has(marked)).toBe(false);
  });

  it('walks values that are not settled every time (they may change)', () => {
    const clean = new WeakSet<object>();
    const value = { content: 'fine' };
    expect(new Neutralizer(re, [], clean).apply(value)).toBe(value);
    value.content = 'now <tool_call>';
    expect(new Neutralizer(re, [], clean).apply(value).content).toBe('now \uE0000\uE001');
  });
});
