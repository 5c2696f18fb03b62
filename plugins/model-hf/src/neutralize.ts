import { isSettled } from '@clawgym/core';

/**
 * Keeps message text from becoming template markup. Before rendering, every control-token
 * look-alike in text from the harness (message content, reasoning, tool arguments, tool specs)
 * is swapped for a typed placeholder — one per token, the same at every occurrence — and the
 * template's own literals that look inside text are swapped the same way
 * (inspected-literals.ts), so a template that splits content on `</think>` or tests it with
 * `startswith('<tool_response>')` decides as it does on the original text. After rendering, the
 * tokenizer splits the rendered string on the control tokens left in it (the template's markup)
 * and the placeholders are put back as plain text. Where the template looks at text in some
 * other way and the render differs from the render of the original messages, the render of the
 * original messages is taken when the look-alikes in it can be told from the markup by the token
 * alone (see JinjaChatTemplate.renderWith); a Neutralizer made `plain` leaves the look-alikes in
 * and records them in {@link Neutralizer.found}.
 */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const TYPED_OPEN = '\uE002';
const TYPED_CLOSE = '\uE003';
const PRIVATE = new Set([OPEN, CLOSE, TYPED_OPEN, TYPED_CLOSE]);
const PLACEHOLDER = /\uE000(\d+)\uE001|\uE002(\d+)\uE003/g;

/** A tokenizer's control tokens as the look-alikes to hide, each with its typed placeholder. */
export class LookAlikes {
  /** The control tokens (longest first) and the private characters placeholders are made of. */
  readonly regex: RegExp;
  readonly tokens: readonly string[];
  private readonly typed = new Map<string, string>();

  constructor(control: Iterable<string>) {
    this.tokens = [...control].sort((a, b) => b.length - a.length);
    this.tokens.forEach((t, i) => this.typed.set(t, `${TYPED_OPEN}${i}${TYPED_CLOSE}`));
    const escaped = this.tokens.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.regex = new RegExp([...escaped, ...PRIVATE].join('|'), 'gu');
  }

  /** The typed placeholder of a control token. */
  placeholder(token: string): string | undefined {
    return this.typed.get(token);
  }

  /** `s` with each control token replaced by its typed placeholder (for the template's literals that look inside text). */
  hide(s: string): string {
    this.regex.lastIndex = 0;
    if (!this.regex.test(s)) return s;
    this.regex.lastIndex = 0;
    return s.replace(this.regex, (m) => this.typed.get(m) ?? m);
  }
}

/** What a Neutralizer starts from: the originals of values neutralized before (tools), and what they held. */
export interface NeutralSeed {
  readonly originals: readonly string[];
  /** Look-alikes left in plain text (a `plain` Neutralizer's). */
  readonly found?: ReadonlySet<string>;
  /** Whether typed placeholders were written. */
  readonly hidden?: boolean;
}

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
  /** `plain`: the control-token look-alikes left in the text, which the tokenizer must encode as text. */
  readonly found: Set<string>;
  private hidden: boolean;
  /** Look-alikes and private characters met so far (a settled value without any is clean). */
  private hits = 0;

  /**
   * `seed`: the originals of values neutralized before (their placeholders keep their numbers).
   * `clean`: settled values (util/settled.ts) already found to hold no look-alike, shared by the
   * Neutralizers of one template: they cannot change, so they are not walked again (a render's
   * window is mostly messages of earlier calls). `plain`: leave the control-token look-alikes in
   * (only the private characters and {@link Opaque} texts get placeholders).
   */
  constructor(private readonly looks: LookAlikes, seed: NeutralSeed | readonly string[] = [], private readonly clean?: WeakSet<object>, readonly plain = false) {
    const s: NeutralSeed = Array.isArray(seed) ? { originals: seed } : seed as NeutralSeed;
    this.originals = [...s.originals];
    this.found = new Set(s.found);
    this.hidden = s.hidden ?? false;
  }

  /** Whether any look-alike (or private character) was met, here or in the seed's values. */
  get met(): boolean {
    return this.hits > 0 || this.hidden || this.found.size > 0;
  }

  /** What a later Neutralizer continues from. */
  get seed(): NeutralSeed {
    return { originals: this.originals, found: this.found, hidden: this.hidden };
  }

  /** A copy to fill in further originals without touching this one. */
  copy(): Neutralizer {
    return new Neutralizer(this.looks, this.seed, this.clean, this.plain);
  }

  /** `value` with every look-alike in its strings (keys too) replaced by a placeholder; parts without any are shared, not copied. */
  apply<T>(value: T): T {
    return this.deep(value) as T;
  }

  private str(s: string): string {
    const re = this.looks.regex;
    re.lastIndex = 0;
    if (!re.test(s)) return s;
    re.lastIndex = 0;
    return s.replace(re, (m) => {
      this.hits++;
      if (PRIVATE.has(m)) return `${OPEN}${this.originals.push(m) - 1}${CLOSE}`;
      if (this.plain) { this.found.add(m); return m; }
      this.hidden = true;
      return this.looks.placeholder(m)!;
    });
  }

  /** `v` with look-alikes replaced; a value without any is returned as it is (nothing copied). */
  private deep(v: unknown): unknown {
    if (typeof v === 'string') return this.str(v);
    if (v instanceof Opaque) {
      // A plain render of the same values numbers its placeholders as the hidden render did
      // (private characters and opaque texts are met in the same order): the same placeholder.
      v.index = this.originals.push('') - 1;
      v.placeholder = `${OPEN}${v.index}${CLOSE}`;
      return v;
    }
    if (this.clean && typeof v === 'object' && v !== null && isSettled(v)) {
      if (this.clean.has(v)) return v;
      const hits = this.hits;
      const out = this.walk(v);
      if (this.hits === hits) this.clean.add(v);
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
    if (!this.originals.length && !this.hidden) return text;
    return text.replace(PLACEHOLDER, (_, i: string | undefined, t: string | undefined) => (i !== undefined ? this.originals[Number(i)] ?? '' : this.looks.tokens[Number(t)] ?? ''));
  }
}
