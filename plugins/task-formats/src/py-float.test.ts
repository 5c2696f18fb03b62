import { pyFloat, pySplitLines, pyStrip } from './py-float';

// Expected values are what CPython 3.11 gives (python3 -c 'print(repr(float(...)))', str.splitlines()).
describe('Python float(), splitlines() and strip()', () => {
  it.each([
    ['0.5', 0.5], [' 1 ', 1], ['1_000.25', 1000.25], ['.5', 0.5], ['5.', 5], ['1e-3', 0.001], ['+2E2', 200],
    ['-0.0', -0], ['Infinity', Infinity], ['-inf', -Infinity], ['0.1234567890123456789', 0.12345678901234568], ['\u30000.25\x85', 0.25],
  ])('float(%j) is %p', (text, want) => {
    expect(Object.is(pyFloat(text), want)).toBe(true);
  });

  it('reads nan as NaN', () => expect(pyFloat('NaN')).toBeNaN());

  it.each(['', '.', '1__0', '_1', '1_', '0x10', '1,5', '1.5.2', 'e5', '1e', 'score: 1', '½', '\ufeff1', '1 2', '\x1c0.25'])('float(%j) raises', (text) => {
    expect(pyFloat(text)).toBeUndefined();
  });

  it('splits lines at every boundary Python knows, and strips its whitespace', () => {
    expect(pySplitLines('a\r\nb\rc\x0bd\x1ce\u2028f\n')).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(pySplitLines('a\n\n')).toEqual(['a', '']);
    expect(pyStrip('\u3000 x \x85')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
  });
});
