import { isSettled } from '../util/settled';

/**
 * Keeps message text from becoming template markup. Before rendering, every control-token
 * look-alike in text from the harness (message content, reasoning, tool arguments, tool specs)
 * is swapped for a private-use placeholder; the template renders, and only then are the
 * placeholders put back — as plain text, since the tokenizer splits on control tokens in the
 * rendered string before the placeholders are restored. The rendered text equals what the
 * template writes for the original messages whenever the template does not itself look inside
 * text for markup.
 */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/**
 * A string not known yet: a message's text in a render made before the message arrives (see
 * JinjaChatTemplate.primeContinuation). Neutralizing gives it a placeholder of its own, whose
 * original is filled in once the text is known; the compiled template may only write it out
 * (jinja-compile.ts: any other use of it throws `Fallback`), so a render that succeeds is the
 * render of every string in its place.
 */
export class Opaque {
  /** The placeholder's number in the Neutralizer that met it (set by {@link Neutralizer.apply}). */
  index = -1;
  /** The placeholder the template writes for it. */
  placeholder = '';
}

export class Neutralizer {
  readonly originals: string[];

  /**
   * `seed`: the originals of values neutralized before (their placeholders keep their numbers).
   * `clean`: settled values (util/settled.ts) already found to hold no look-alike of this
   * `lookAlike`, shared by the Neutralizers of one template: they cannot change, so they are
   * not walked again (a render's window is mostly messages of earlier calls).
   */
  constructor(private readonly lookAlike: RegExp, seed: readonly string[] = [], private readonly clean?: WeakSet<object>) {
    this.originals = [...seed];
  }

  /** `value` with every look-alike in its strings (keys too) replaced by a placeholder; parts without any are shared, not copied. */
  apply<T>(value: T): T {
    return this.deep(value) as T;
  }

  private str(s: string): string {
    this.lookAlike.lastIndex = 0;
    if (!this.lookAlike.test(s)) return s;
    this.lookAlike.lastIndex = 0;
    return s.replace(this.lookAlike, (m) => `${OPEN}${this.originals.push(m) - 1}${CLOSE}`);
  }

  /** `v` with look-alikes replaced; a value without any is returned as it is (nothing copied). */
  private deep(v: unknown): unknown {
    if (typeof v === 'string') return this.str(v);
    if (v instanceof Opaque) {
      v.index = this.originals.push('') - 1;
      v.placeholder = `${OPEN}${v.index}${CLOSE}`;
      return v;
    }
    if (this.clean && typeof v === 'object' && v !== null && isSettled(v)) {
      if (this.clean.has(v)) return v;
      const out = this.walk(v);
      if (out === v) this.clean.add(v);
      return out;
    }
    return this.walk(v);
  }

  private walk(v: unknown): unknown {
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        const y = this.deep(x);
        if (out) out.push(y);
        else if (y !== x) { out = v.slice(0, i); out.push(y); }
      }
      return out ?? v;
    }
    if (v && typeof v === 'object') {
      // for…in, not Object.entries: a render walks every message of its window, and the key
      // arrays were most of the walk's garbage.
      const o = v as Record<string, unknown>;
      let out: Record<string, unknown> | undefined;
      for (const k in o) {
        const x = o[k];
        const k2 = this.str(k);
        const y = this.deep(x);
        if (!out && (k2 !== k || y !== x)) {
          out = {};
          for (const j in o) { if (j === k) break; out[j] = o[j]; }
        }
        if (out) out[k2] = y;
      }
      return out ?? v;
    }
    return v;
  }

  /** Text with the placeholders put back. */
  restore(text: string): string {
    return this.originals.length ? text.replace(PLACEHOLDER, (_, i: string) => this.originals[Number(i)] ?? '') : text;
  }
}

/** A regex of the strings to neutralize: the control tokens and the placeholder characters themselves. */
export function lookAlikeRegex(control: Iterable<string>): RegExp {
  const escaped = [...control].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp([...escaped, OPEN, CLOSE].join('|'), 'gu');
}
