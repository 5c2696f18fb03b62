import { JinjaRenderer } from './jinja-env';
import { hideInspectedLiterals } from './inspected-literals';

describe('hideInspectedLiterals', () => {
  const hide = (s: string) => s.replaceAll('</think>', '#T#');
  const render = (source: string, variables: Record<string, unknown>) => {
    let changed = false;
    const r = new JinjaRenderer(source, undefined, 64, (p) => (changed = hideInspectedLiterals(p, hide)));
    return { text: r.render(variables), changed };
  };

  it('hides the literals text is searched or compared with, not those written out', () => {
    const source = "{% if '</think>' in c %}{{ c.split('</think>')[-1] + '</think>' }}{% endif %}{{ c.endswith('</think>') }}{{ c == '</think>' }}{{ c | replace('</think>', '!') }}";
    const { text, changed } = render(source, { c: 'a#T#b' });
    expect(changed).toBe(true);
    // Every search found the hidden form; the written literal '</think>' stayed markup.
    expect(text).toBe('b</think>falsefalsea!b');
  });

  it('leaves a template that inspects nothing with control tokens as it is', () => {
    expect(render("{{ '</think>' + c }}{% if c.startswith('x') %}x{% endif %}", { c: 'xy' })).toEqual({ text: '</think>xyx', changed: false });
  });
});
