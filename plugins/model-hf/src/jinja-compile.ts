/**
 * A chat template's parsed form (from @huggingface/jinja) compiled to the source of one
 * JavaScript function over plain values. @huggingface/jinja's interpreter wraps every value it
 * touches in a runtime object (a small render of Qwen3's template allocates thousands); the proxy
 * renders at every call, so that allocation and its garbage were most of a call's cost. The
 * function computes what the interpreter computes — same operators, truthiness, member access,
 * `tojson`, loop variables and scopes, down to its quirks (`==` is JavaScript's loose equality on
 * the values, booleans print as `true`) — for the constructs chat templates use. A construct
 * outside that set makes {@link compileTemplate} return undefined (the interpreter renders that
 * template), and a value outside it at render time (an operation on `none`, a float in
 * arithmetic, comparing two lists) throws {@link Fallback}: that render is redone by the
 * interpreter, which is always the reference (its result or its error). Tests compare both on
 * every golden case.
 *
 * An {@link Opaque} value (a message's text not known yet) may only be written out: written to
 * the output it is its placeholder; tested it is a string (`is string`, `is defined`, `== none`
 * are false or true of every string alike); joined to strings by `+` or `~` it is an
 * {@link OpaqueConcat}, under the same rules; any other use — its truth, a comparison, a method,
 * a filter but `safe`, a member, a loop, a global's argument, or writing it into a `set` block,
 * whose text the template could then inspect — throws {@link Fallback}. A render that finishes
 * with one is therefore the render of every string in its place.
 */

import { FILTERS, HELPERS, METHODS, TESTS } from './jinja-runtime';
import { own } from './jinja-values';

/** Raised at compile time for a construct the compiler does not handle. */
class Unsupported extends Error {}

type Node = { type: string; [k: string]: unknown };

/** A scope of the template: the root (its variables) or one `for` (new at each run of the loop). */
interface ScopeInfo {
  parent?: ScopeInfo;
  /** Name → the JavaScript variable holding it in this scope. */
  slots: Map<string, string>;
  /** Names certainly set where the code being compiled runs (a loop's body: `loop` and its variable). */
  set?: ReadonlySet<string>;
}

/**
 * Compiles a parsed template to the source of one JavaScript function. Each scope's variables
 * are JavaScript variables: a `for` scope's start unset (see {@link UNSET}) at each run of the
 * loop, and a name reads the innermost scope that has set it, as the interpreter's lookup does;
 * the root's are read once from the variables. The names a scope can set are known from the
 * template (`set` in its body, outside inner loops; `loop` and the loop variable), so a lookup is
 * a few comparisons of locals instead of map lookups up a chain of scopes.
 */
class SourceCompiler {
  private next = 0;
  readonly root: ScopeInfo = { slots: new Map() };

  private fresh(prefix: string): string {
    return `${prefix}${this.next++}`;
  }

  /** The root scope's variable of a name (made on first use). */
  private rootSlot(name: string): string {
    let slot = this.root.slots.get(name);
    if (!slot) this.root.slots.set(name, (slot = this.fresh('r')));
    return slot;
  }

  lookup(name: string, scope: ScopeInfo): string {
    const chain: string[] = [];
    for (let s: ScopeInfo | undefined = scope; s && s !== this.root; s = s.parent) {
      const slot = s.slots.get(name);
      if (slot && s.set?.has(name)) return chain.reduceRight((code, inner) => `(${inner} !== UNSET ? ${inner} : ${code})`, slot);
      if (slot) chain.push(slot);
    }
    let code = this.rootSlot(name);
    for (let i = chain.length - 1; i >= 0; i--) code = `(${chain[i]} !== UNSET ? ${chain[i]} : ${code})`;
    return code;
  }

  /** The variable a `set` of `name` in `scope` writes. */
  private assign(name: string, scope: ScopeInfo): string {
    return scope === this.root ? this.rootSlot(name) : scope.slots.get(name)!;
  }

  args(args: Node[], scope: ScopeInfo): { positional: string[]; keywords: [string, string][] } {
    const positional: string[] = [];
    const keywords: [string, string][] = [];
    for (const a of args) {
      if (a.type === 'KeywordArgumentExpression') keywords.push([(a.key as Node).value as string, this.expr(a.value as Node, scope)]);
      else if (a.type === 'SpreadExpression' || a.type === 'KeywordSpreadExpression') throw new Unsupported(a.type);
      else positional.push(this.expr(a, scope));
    }
    return { positional, keywords };
  }

  call(node: Node, scope: ScopeInfo): string {
    const callee = node.callee as Node;
    const { positional, keywords } = this.args(node.args as Node[], scope);
    if (callee.type === 'MemberExpression' && !callee.computed && (callee.property as Node).type === 'Identifier') {
      const name = (callee.property as Node).value as string;
      if (!METHODS[name]) throw new Unsupported(`method ${name}`);
      const args = `[${positional.join(', ')}]`;
      if (keywords.length) return `(${args}, ${keywords.map(([, v]) => v).join(', ')}, fail('keyword arguments to a method'))`;
      return `callMethod(${JSON.stringify(name)}, ${this.expr(callee.object as Node, scope)}, ${args})`;
    }
    if (callee.type !== 'Identifier') throw new Unsupported(`call of ${callee.type}`);
    const name = callee.value as string;
    const kw = keywords.map(([k, v]) => `[${JSON.stringify(k)}, ${v}]`);
    return `call(${this.lookup(name, scope)}, ${JSON.stringify(name)}, [${positional.join(', ')}], [${kw.join(', ')}])`;
  }

  expr(node: Node | undefined | null, scope: ScopeInfo): string {
    if (!node) return 'undefined';
    switch (node.type) {
      case 'StringLiteral': return JSON.stringify(node.value as string);
      case 'IntegerLiteral': {
        const v = node.value;
        if (typeof v !== 'number' || !Number.isFinite(v)) throw new Unsupported('integer literal');
        return `(${v})`;
      }
      case 'ArrayLiteral': return `[${(node.value as Node[]).map((n) => this.expr(n, scope)).join(', ')}]`;
      case 'Identifier': return this.lookup(node.value as string, scope);
      case 'MemberExpression': {
        const object = this.expr(node.object as Node, scope);
        const prop = node.property as Node;
        if (node.computed && prop.type === 'SliceExpression') {
          const [a, b, c] = [prop.start, prop.stop, prop.step].map((n) => this.expr(n as Node | undefined, scope));
          return `sliceOf(${object}, ${a}, ${b}, ${c})`;
        }
        if (node.computed) return `member(${object}, ${this.expr(prop, scope)})`;
        const key = prop.value;
        if (typeof key !== 'string' && typeof key !== 'number') throw new Unsupported('member key');
        return `member(${object}, ${JSON.stringify(key)})`;
      }
      case 'CallExpression': return this.call(node, scope);
      case 'UnaryExpression': {
        const op = (node.operator as Node).value as string;
        const arg = this.expr(node.argument as Node, scope);
        if (op === 'not') return `!truthy(${arg})`;
        if (op === '-' || op === '+') return `sign(${arg}, ${op === '-' ? -1 : 1})`;
        throw new Unsupported(`unary ${op}`);
      }
      case 'BinaryExpression': {
        const op = (node.operator as Node).value as string;
        const left = this.expr(node.left as Node, scope);
        const right = this.expr(node.right as Node, scope);
        if (op === 'and' || op === 'or') {
          // The value of the side that decides, as Python's `and`/`or` give it.
          const t = this.fresh('t');
          this.temps.push(t);
          return op === 'and' ? `(truthy(${t} = ${left}) ? ${right} : ${t})` : `(truthy(${t} = ${left}) ? ${t} : ${right})`;
        }
        if (!['==', '!=', '+', '-', '*', '%', '<', '>', '<=', '>=', 'in', 'not in', '~'].includes(op)) throw new Unsupported(`operator ${op}`);
        const special = op === '==' ? 'eq' : op === '!=' ? 'ne' : op === '+' ? 'add' : undefined;
        return special ? `${special}(${left}, ${right})` : `binary(${JSON.stringify(op)}, ${left}, ${right})`;
      }
      case 'FilterExpression': {
        const f = node.filter as Node;
        if (f.type !== 'Identifier' || !FILTERS.has(f.value as string)) throw new Unsupported('filter');
        return `filter(${JSON.stringify(f.value as string)}, ${this.expr(node.operand as Node, scope)})`;
      }
      case 'TestExpression': {
        const name = (node.test as Node).value as string;
        if (typeof name !== 'string' || !own.call(TESTS, name)) throw new Unsupported(`test ${name}`);
        return `(TESTS[${JSON.stringify(name)}](${this.expr(node.operand as Node, scope)}) !== ${!!node.negate})`;
      }
      case 'Ternary': {
        const [c, t, f] = [node.condition, node.trueExpr, node.falseExpr].map((n) => this.expr(n as Node | undefined, scope));
        return `(truthy(${c}) ? ${t} : ${f})`;
      }
    }
    throw new Unsupported(node.type);
  }

  /** Temporaries of `and`/`or`, declared once at the top of the function. */
  readonly temps: string[] = [];

  block(nodes: Node[], scope: ScopeInfo, out: string): string {
    return nodes.map((n) => this.statement(n, scope, out)).join('\n');
  }

  /** The names a scope's statements can set: `set` targets, in `if` branches and `set` blocks too, not in inner loops. */
  private setsIn(nodes: Node[] | undefined, names: Set<string>): void {
    for (const n of nodes ?? []) {
      if (n.type === 'Set' && (n.assignee as Node).type === 'Identifier') names.add((n.assignee as Node).value as string);
      if (n.type === 'If') { this.setsIn(n.body as Node[], names); this.setsIn(n.alternate as Node[] | undefined, names); }
      if (n.type === 'Set' && !n.value) this.setsIn(n.body as Node[] | undefined, names);
    }
  }

  statement(node: Node, scope: ScopeInfo, out: string): string {
    switch (node.type) {
      case 'Comment': return '';
      case 'If': {
        const test = this.expr(node.test as Node, scope);
        const alternate = (node.alternate as Node[] | undefined) ?? [];
        return `if (truthy(${test})) {\n${this.block(node.body as Node[], scope, out)}\n}${alternate.length ? ` else {\n${this.block(alternate, scope, out)}\n}` : ''}`;
      }
      case 'Set': {
        const assignee = node.assignee as Node;
        let pre = '';
        let rhs: string;
        if (node.value) rhs = this.expr(node.value as Node, scope);
        else {
          const o = this.fresh('o');
          pre = `let ${o} = '';\n${this.block((node.body as Node[] | undefined) ?? [], scope, o)}\n`;
          rhs = o;
        }
        if (assignee.type === 'Identifier') return `{\n${pre}${this.assign(assignee.value as string, scope)} = ${rhs};\n}`;
        if (assignee.type === 'MemberExpression' && (assignee.property as Node).type === 'Identifier' && !assignee.computed) {
          const v = this.fresh('v');
          return `{\n${pre}const ${v} = ${rhs};\nsetAttribute(${this.expr(assignee.object as Node, scope)}, ${JSON.stringify((assignee.property as Node).value as string)}, ${v});\n}`;
        }
        throw new Unsupported('set target');
      }
      case 'For': {
        if ((node.loopvar as Node).type !== 'Identifier' || (node.iterable as Node).type === 'SelectExpression') throw new Unsupported('for form');
        const name = (node.loopvar as Node).value as string;
        const body = node.body as Node[];
        const otherwise = (node.defaultBlock as Node[] | undefined) ?? [];
        const names = new Set(['loop', name]);
        this.setsIn(body, names);
        this.setsIn(otherwise, names);
        const inner: ScopeInfo = { parent: scope, slots: new Map([...names].map((n) => [n, this.fresh('f')])) };
        const [items, n, i] = [this.fresh('items'), this.fresh('n'), this.fresh('i')];
        const slots = [...inner.slots.values()];
        return `{\nlet ${slots.map((s) => `${s} = UNSET`).join(', ')};
const ${items} = loopItems(${this.expr(node.iterable as Node, inner)});
const ${n} = ${items}.length;
for (let ${i} = 0; ${i} < ${n}; ${i}++) {
${inner.slots.get('loop')} = { index: ${i} + 1, index0: ${i}, revindex: ${n} - ${i}, revindex0: ${n} - ${i} - 1, first: ${i} === 0, last: ${i} === ${n} - 1, length: ${n}, previtem: ${i} > 0 ? ${items}[${i} - 1] : undefined, nextitem: ${i} < ${n} - 1 ? ${items}[${i} + 1] : undefined };
${inner.slots.get(name)} = ${items}[${i}];
${this.block(body, { ...inner, set: new Set(['loop', name]) }, out)}
}
${otherwise.length ? `if (${n} === 0) {\n${this.block(otherwise, inner, out)}\n}` : ''}
}`;
      }
    }
    if (node.type === 'StringLiteral') return `${out} += ${JSON.stringify(node.value as string)};`;
    return `${out} += ${out === 'out' ? 'text' : 'captured'}(${this.expr(node, scope)});`;
  }
}

/**
 * A compiled template: its variables in, the rendered text out. They come from three objects,
 * read as if spread into one in this order (a name the later one has, even as undefined, is
 * the later one's): the variables, the globals, the prepared values — read by name, so that no
 * object of them all is made at each render.
 */
export type CompiledTemplate = (variables: Record<string, unknown>, globals: Record<string, unknown>, prepared: Record<string, unknown>) => string;

/**
 * Compile a parsed template to one JavaScript function (see {@link SourceCompiler}), or
 * undefined when it uses a construct the compiler does not handle. The source holds no text of
 * the template but string literals written by `JSON.stringify`, and names it makes itself.
 */
export function compileTemplate(program: { body: unknown[] }): CompiledTemplate | undefined {
  const c = new SourceCompiler();
  let body: string;
  try {
    body = c.block(program.body as Node[], c.root, 'out');
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  // The root's variables: what was passed (an undefined value is unset), `namespace` unless passed.
  const roots = [...c.root.slots].map(([name, slot]) => {
    const key = JSON.stringify(name);
    const read = `own.call(prepared, ${key}) ? prepared[${key}] : own.call(globals, ${key}) ? globals[${key}] : own.call(vars, ${key}) ? vars[${key}] : undefined`;
    return name === 'namespace' ? `let ${slot} = ${read};\nif (${slot} === undefined) ${slot} = NAMESPACE;` : `let ${slot} = ${read};`;
  });
  const source = `const { ${Object.keys(HELPERS).join(', ')} } = helpers;
return function render(vars, globals, prepared) {
${roots.join('\n')}
${c.temps.length ? `let ${c.temps.join(', ')};` : ''}
let out = '';
${body}
return out;
};`;
  return new Function('helpers', source)(HELPERS) as CompiledTemplate;
}
