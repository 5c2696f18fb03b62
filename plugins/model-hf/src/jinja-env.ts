import type * as Jinja from '@huggingface/jinja' with { 'resolution-mode': 'import' };

// The package is ESM with a CommonJS build for Node's require (its "exports"); core is CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Environment, Interpreter, Template } = require('@huggingface/jinja') as typeof Jinja;
type Template = Jinja.Template;
import { ClawGymError, ErrorCodes, messageOf } from '@clawgym/core';
import { compileTemplate, type CompiledTemplate } from './jinja-compile';
import { freezeForRender } from './jinja-values';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Python's `datetime.strftime` for the directives chat templates use (local time, C locale). */
export function strftime(format: string, d: Date): string {
  return format.replace(/%([a-zA-Z%])/g, (whole, c: string) => {
    switch (c) {
      case 'Y': return String(d.getFullYear());
      case 'y': return pad(d.getFullYear() % 100);
      case 'm': return pad(d.getMonth() + 1);
      case 'd': return pad(d.getDate());
      case 'e': return String(d.getDate()).padStart(2, ' ');
      case 'H': return pad(d.getHours());
      case 'I': return pad(d.getHours() % 12 || 12);
      case 'M': return pad(d.getMinutes());
      case 'S': return pad(d.getSeconds());
      case 'p': return d.getHours() < 12 ? 'AM' : 'PM';
      case 'b': return MONTHS[d.getMonth()]!.slice(0, 3);
      case 'B': return MONTHS[d.getMonth()]!;
      case 'a': return DAYS[d.getDay()]!.slice(0, 3);
      case 'A': return DAYS[d.getDay()]!;
      case 'j': return pad(Math.floor((d.getTime() - new Date(d.getFullYear(), 0, 1).getTime()) / 86_400_000) + 1, 3);
      case '%': return '%';
      default: return whole;
    }
  });
}

/** Python's `range`. */
function range(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) { stop = start; start = 0; }
  if (step === 0) throw new TemplateException('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/** Python's `str.isspace()` characters (what `strip()` without arguments removes). */
const PY_SPACE = '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** Python's `str.strip/lstrip/rstrip(chars)`. */
function strip(value: unknown, mode: 'both' | 'left' | 'right', chars?: string | null): string {
  if (typeof value !== 'string') throw new TemplateException(`'${value === null ? 'NoneType' : typeof value}' object has no attribute 'strip'`);
  const set = new Set(Array.from(chars ?? PY_SPACE));
  const cps = Array.from(value);
  let a = 0;
  let b = cps.length;
  if (mode !== 'right') while (a < b && set.has(cps[a]!)) a++;
  if (mode !== 'left') while (b > a && set.has(cps[b - 1]!)) b--;
  return cps.slice(a, b).join('');
}

const STRIP = '__clawgym_py_strip';
const MODES: Record<string, string> = { strip: 'both', lstrip: 'left', rstrip: 'right' };
type Node = { type?: string; [k: string]: unknown };
const lit = (value: string): Node => ({ type: 'StringLiteral', value });

/**
 * @huggingface/jinja's `strip`/`lstrip`/`rstrip` ignore their `chars` argument and its `trim`
 * uses JavaScript's whitespace, where Python's differ: Qwen3's template writes
 * `content.lstrip('\n')`, which must keep a leading space. The parsed template is rewritten so
 * these calls go to Python's semantics ({@link strip}).
 */
function pythonStrip(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) { node.forEach((n, i) => { node[i] = rewrite(n); pythonStrip(node[i]); }); return; }
  for (const [k, v] of Object.entries(node as Node)) {
    if (v && typeof v === 'object') { (node as Node)[k] = Array.isArray(v) ? v : rewrite(v); pythonStrip((node as Node)[k]); }
  }
}

function rewrite(n: unknown): unknown {
  const node = n as Node;
  if (node?.type === 'CallExpression') {
    const callee = node.callee as Node;
    const prop = callee?.property as Node | undefined;
    if (callee?.type === 'MemberExpression' && !callee.computed && prop?.type === 'Identifier' && MODES[prop.value as string]) {
      return { type: 'CallExpression', callee: { type: 'Identifier', value: STRIP }, args: [callee.object, lit(MODES[prop.value as string]!), ...(node.args as unknown[])] };
    }
  }
  if (node?.type === 'FilterExpression') {
    const f = node.filter as Node;
    if (f?.type === 'Identifier' && f.value === 'trim') return { type: 'CallExpression', callee: { type: 'Identifier', value: STRIP }, args: [node.operand, lit('both')] };
    if (f?.type === 'CallExpression' && (f.callee as Node)?.type === 'Identifier' && (f.callee as Node).value === 'trim') {
      return { type: 'CallExpression', callee: { type: 'Identifier', value: STRIP }, args: [node.operand, lit('both'), ...(f.args as unknown[])] };
    }
  }
  return n;
}

/** A value converted once for the interpreter (see {@link JinjaRenderer.prepare}), and as given (for the compiled form). */
export interface Prepared { readonly runtime: unknown; readonly plain: unknown }

/** No prepared values (most renders): one empty object for them all. */
const NONE: Record<string, unknown> = Object.freeze({});

/** Raised by a template's `raise_exception(...)`: the template refused the conversation. */
class TemplateException extends Error {}

/**
 * Renders a chat template in Hugging Face's environment (transformers' `apply_chat_template`):
 * `trim_blocks` and `lstrip_blocks` (built into @huggingface/jinja, which follows transformers),
 * `tojson` as `json.dumps(ensure_ascii=False)`, loop controls, and the globals
 * `raise_exception` and `strftime_now`. The parsed template is kept: only rendering costs.
 */
export class JinjaRenderer {
  private readonly template: Template;
  /** The template compiled to a function (see jinja-compile.ts); undefined: the interpreter renders. */
  private compiled?: CompiledTemplate;
  private renders = 0;
  /** Whether the constructor's `rewrite` changed the template. */
  readonly rewritten: boolean;

  /**
   * `crossCheckEvery`: every n-th compiled render is also rendered by the interpreter; if they
   * ever differ, the compiled form is dropped for good (the interpreter is the reference).
   */
  /**
   * `rewrite`: changes the parsed template before it is compiled (jinja-template.ts hides the
   * control tokens of the literals a template looks inside text with); returns whether it changed it.
   */
  constructor(source: string, private readonly now: () => Date = () => new Date(), private readonly crossCheckEvery = 64, rewrite?: (parsed: unknown) => boolean) {
    try {
      this.template = new Template(source);
      pythonStrip(this.template.parsed);
      this.rewritten = rewrite?.(this.template.parsed) ?? false;
    } catch (err) {
      throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, `the chat template does not parse: ${messageOf(err)}`, { cause: err });
    }
    this.compiled = compileTemplate(this.template.parsed as unknown as { body: unknown[] });
  }

  /** Whether renders go through the compiled form (false: the template uses something it does not handle, or it once differed). */
  get isCompiled(): boolean {
    return this.compiled !== undefined;
  }

  /**
   * A variable converted once to the interpreter's values, for {@link render}'s `prepared`: a
   * harness's tool list is the same at every call, and converting its schemas (and the garbage
   * that makes) is a good part of an interpreted render. Converted on first use (the compiled
   * form reads the plain value). Safe to share between renders: templates can mutate only the
   * namespaces they make themselves.
   */
  prepare(value: unknown): Prepared {
    value = freezeForRender(value);
    let runtime: unknown;
    return { plain: value, get runtime() { return (runtime ??= new Environment().set('v', value)); } };
  }

  /** The globals, made once (they hold no state of a render). */
  private globals(): Record<string, unknown> {
    return (this.globalValues ??= {
      false: false, true: true, none: null, False: false, True: true, None: null, range, [STRIP]: strip,
      raise_exception: (message: string) => { throw new TemplateException(message); },
      strftime_now: (format: string) => strftime(format, this.now()),
    });
  }

  private globalValues?: Record<string, unknown>;

  render(variables: Record<string, unknown>, prepared: Record<string, Prepared> = {}): string {
    // Undefined: no compiled form, a value it leaves to the interpreter, or an error: the interpreter's result or error stands.
    const text = this.renderCompiled(variables, prepared);
    if (text !== undefined) {
      if (++this.renders % this.crossCheckEvery !== 0) return text;
      const reference = this.interpret(variables, prepared);
      if (reference !== text) this.compiled = undefined;
      return reference;
    }
    return this.interpret(variables, prepared);
  }

  /**
   * The compiled form's render only, or undefined where it has none or leaves this render to the
   * interpreter. Called alone for variables holding an `Opaque` text (neutralize.ts,
   * jinja-compile.ts), which the interpreter cannot read and whose render no cross-check could
   * compare: so it is not counted for the cross-checks ({@link render} counts its own).
   */
  renderCompiled(variables: Record<string, unknown>, prepared: Record<string, Prepared> = {}): string | undefined {
    const compiled = this.compiled;
    if (!compiled) return undefined;
    let plain: Record<string, unknown> = NONE;
    for (const k in prepared) {
      if (plain === NONE) plain = {};
      plain[k] = prepared[k]!.plain;
    }
    try {
      return compiled(variables, this.globals(), plain);
    } catch {
      return undefined;
    }
  }

  /** The reference: @huggingface/jinja's interpreter. */
  interpret(variables: Record<string, unknown>, prepared: Record<string, Prepared> = {}): string {
    try {
      // Template.render with our own globals: the library's strftime_now reads the wall clock in
      // the host locale, ours takes a clock (goldens pin it) and Python's C-locale names.
      const env = new Environment();
      for (const [k, v] of Object.entries({ ...variables, ...this.globals() })) if (v !== undefined && !(k in prepared)) env.set(k, v);
      for (const [k, v] of Object.entries(prepared)) env.declareVariable(k, v.runtime as Parameters<typeof env.declareVariable>[1]);
      return new Interpreter(env).run(this.template.parsed).value as string;
    } catch (err) {
      const refused = err instanceof TemplateException;
      throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, refused ? `the chat template refused the conversation: ${err.message}` : `the chat template failed: ${messageOf(err)}`, {
        cause: err,
        hint: refused ? 'the model\'s template cannot express this conversation (e.g. roles that do not alternate, or tool messages in a template without tools)' : undefined,
      });
    }
  }
}
