/**
 * Chat templates look inside message text with their own string literals: Qwen3's
 * `'</think>' in message.content`, `content.split('</think>')`, `startswith('<tool_response>')`.
 * Message text reaches the template with its control-token look-alikes hidden behind typed
 * placeholders (neutralize.ts: the same placeholder for every occurrence of one token), so a
 * literal the template tests text with must be hidden the same way, or the template would see
 * text without the marker it looks for and render something Python's `apply_chat_template`
 * does not. Literals the template writes out stay as they are: they are markup.
 */

type Node = { type?: string; [k: string]: unknown };

/** Methods whose first argument is looked for in the string they are called on (Python's names). */
const SEARCH_METHODS = new Set(['split', 'rsplit', 'startswith', 'endswith', 'find', 'rfind', 'index', 'rindex', 'count', 'replace', 'partition', 'rpartition', 'removeprefix', 'removesuffix']);
/** Operators whose operands are compared as text: both sides are looked for, none is written out. */
const COMPARING = new Set(['in', 'not in', '==', '!=']);

/**
 * Rewrites, in place, the string literals of a parsed template that are compared with or looked
 * for in other strings, through `hide` (which replaces the control tokens in a string by their
 * typed placeholders). Returns whether any literal changed (if none did, the template renders
 * the same with and without the rewrite).
 */
export function hideInspectedLiterals(program: unknown, hide: (s: string) => string): boolean {
  let changed = false;
  const literal = (n: unknown): void => {
    const node = n as Node | undefined;
    if (node?.type === 'StringLiteral' && typeof node.value === 'string') {
      const v = hide(node.value);
      if (v !== node.value) { node.value = v; changed = true; }
    } else if (node && (node.type === 'ArrayLiteral' || node.type === 'TupleLiteral') && Array.isArray(node.value)) {
      for (const x of node.value) literal(x);
    }
  };
  const visit = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) { for (const x of n) visit(x); return; }
    const node = n as Node;
    if (node.type === 'CallExpression') {
      const callee = node.callee as Node | undefined;
      const name = (callee?.property as Node | undefined)?.value;
      const args = node.args as unknown[] | undefined;
      if (callee?.type === 'MemberExpression' && !callee.computed && typeof name === 'string' && SEARCH_METHODS.has(name) && args?.length) literal(args[0]);
    } else if (node.type === 'FilterExpression') {
      // `x | replace('<think>', '')`: the filter is a call whose first argument is looked for.
      const f = node.filter as Node | undefined;
      const fname = (f?.callee as Node | undefined)?.value;
      if (f?.type === 'CallExpression' && fname === 'replace' && (f.args as unknown[] | undefined)?.length) literal((f.args as unknown[])[0]);
    } else if (node.type === 'BinaryExpression' && COMPARING.has((node.operator as Node | undefined)?.value as string)) {
      literal(node.left);
      literal(node.right);
    }
    for (const k in node) if (k !== 'type') visit(node[k]);
  };
  visit(program);
  return changed;
}
