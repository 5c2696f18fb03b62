import { Rng, type OracleTurn, type Task, type Verdict, type Workspace } from '@clawgym/core';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const word = (rng: Rng, min = 3, max = 6) => Array.from({ length: rng.int(min, max) }, () => LETTERS[rng.int(0, 25)]).join('');
const verdict = (pass: boolean, details: string): Verdict => ({ reward: pass ? 1 : 0, pass, details });
const write = (path: string, content: string) => ({ name: 'write_file', arguments: { path, content } });
const read = (path: string) => ({ name: 'read_file', arguments: { path } });

/** Compare a file's text with what is expected (trailing newline ignored). */
async function fileIs(ws: Workspace, path: string, want: string): Promise<Verdict> {
  if (!(await ws.exists(path))) return verdict(false, `${path} was not written`);
  const got = (await ws.readFile(path)).toString('utf8').replace(/\n$/, '');
  return got === want ? verdict(true, `${path} is correct`) : verdict(false, `${path}: expected ${JSON.stringify(want)}, found ${JSON.stringify(got.slice(0, 80))}`);
}

/** Which split a task is drawn for: copy-friendly families keep their held-out combinations apart. */
export type Split = 'train' | 'test';
type Family = (rng: Rng, id: string, split: Split) => Task;

/**
 * A closed vocabulary for the copy-friendly families: 32 words of three letters. A small model
 * with learned positions copies from a fixed offset long before it learns to find words of any
 * length (an induction head; see MACHINE-NOTES' calibration), and with every word the same
 * length each instruction, and so each answer, has the same shape. These families leave room
 * between 0% and 100% for RL to show at laptop scale.
 * Held-out tasks use word combinations no train task uses (`heldOutCombo`), so Pass@1 on the
 * test split measures generalisation to new combinations, not recall of seen tasks.
 */
export const WORDS = ['ash', 'bay', 'cod', 'dew', 'elm', 'fig', 'gem', 'hut', 'ink', 'jam', 'kit', 'log', 'mud', 'nut', 'oak', 'pea',
  'ram', 'sun', 'tea', 'urn', 'van', 'wax', 'yak', 'zip', 'bee', 'cow', 'den', 'fox', 'gum', 'hay', 'ivy', 'owl'] as const;
/** One combination in eight of two word indices is held out for the test split. */
const heldOutCombo = (a: number, b: number) => (a * 5 + b * 3) % 8 === 0;
function wordPair(rng: Rng, split: Split): [string, string] {
  for (;;) {
    const a = rng.int(0, WORDS.length - 1); const b = rng.int(0, WORDS.length - 1);
    if (a !== b && heldOutCombo(a, b) === (split === 'test')) return [WORDS[a]!, WORDS[b]!];
  }
}

/** Difficulty 1: create `name`.txt holding `content`. */
function writeTask(id: string, category: string, name: string, content: string): Task {
  return {
    id, category, difficulty: 1,
    instruction: `Create ${name}.txt containing ${content}`,
    setup: async () => {},
    verify: (ws) => fileIs(ws, `${name}.txt`, content),
    oracle: [{ toolCalls: [write(`${name}.txt`, content)] }],
  };
}

/** Difficulty 2: read `src`.txt (holding `text`), write its text in `kind` to `dst`.txt. */
function transformTask(id: string, category: string, src: string, dst: string, text: string, kind: 'upper case' | 'reverse order of the words'): Task {
  const out = kind === 'upper case' ? text.toUpperCase() : text.split(' ').reverse().join(' ');
  return {
    id, category, difficulty: 2,
    instruction: `Read ${src}.txt and write its text in ${kind} to ${dst}.txt`,
    setup: async (ws) => { await ws.writeFile(`${src}.txt`, `${text}\n`); },
    verify: (ws) => fileIs(ws, `${dst}.txt`, out),
    oracle: [{ toolCalls: [read(`${src}.txt`)] }, { toolCalls: [write(`${dst}.txt`, out)] }],
  };
}

/** Copy-friendly: write one file, name and content from the closed vocabulary. */
const vocabWrite: Family = (rng, id, split) => {
  const [name, content] = wordPair(rng, split);
  return writeTask(id, 'vocab-write', name, content);
};

/** Copy-friendly: read a file holding a vocabulary word, write it in upper case. */
const vocabUpper: Family = (rng, id, split) => {
  const [src, dst] = wordPair(rng, split);
  return transformTask(id, 'vocab-upper', src, dst, WORDS[rng.int(0, WORDS.length - 1)]!, 'upper case');
};

/** How long a `vocab-upper-slow` task's verifier takes, as a slow test suite does. */
export const SLOW_VERIFY_MS = 3000;

/**
 * `vocab-upper` with a verifier that takes {@link SLOW_VERIFY_MS}: the same task for the model
 * (instruction, files, answer, oracle), only a longer rollout. Mixed with `vocab-upper` it gives
 * long and short tasks of equal difficulty, which shows whether an asynchronous loop trains on
 * short rollouts more than it generates them (`run.async.policy`).
 */
const vocabUpperSlow: Family = (rng, id, split) => {
  const task = vocabUpper(rng, id, split);
  return {
    ...task, category: 'vocab-upper-slow',
    verify: async (ws, ctx) => { await new Promise((ok) => setTimeout(ok, SLOW_VERIFY_MS)); return task.verify(ws, ctx); },
  };
};

/** Write one file with given content. */
const singleWrite: Family = (rng, id) => {
  const name = word(rng); const content = word(rng);
  return writeTask(id, 'write', name, content);
};

/** Read a file, transform it, write another. */
const transform: Family = (rng, id) => {
  const src = word(rng); const dst = word(rng); const text = `${word(rng)} ${word(rng)}`;
  return transformTask(id, 'transform', src, dst, text, rng.pick(['upper case', 'reverse order of the words'] as const));
};

/** Difficulty 2: several files at once. */
const severalFiles: Family = (rng, id) => {
  const files = Array.from({ length: rng.int(2, 3) }, () => [word(rng), word(rng)] as const);
  return {
    id, category: 'several-files', difficulty: 2,
    instruction: `Create ${files.map(([n, c]) => `${n}.txt containing ${c}`).join(', and ')}`,
    setup: async () => {},
    async verify(ws) {
      for (const [n, c] of files) { const v = await fileIs(ws, `${n}.txt`, c); if (!v.pass) return v; }
      return verdict(true, `all ${files.length} files correct`);
    },
    oracle: [{ toolCalls: files.map(([n, c]) => write(`${n}.txt`, c)) }],
  };
};

/** Difficulty 3: aggregate a CSV column. */
const csvSum: Family = (rng, id) => {
  const rows = Array.from({ length: rng.int(3, 6) }, () => [word(rng), rng.int(1, 99)] as const);
  const total = rows.reduce((s, [, v]) => s + v, 0);
  return {
    id, category: 'csv', difficulty: 3,
    instruction: 'data.csv has the columns name,amount. Write the sum of the amount column to total.txt',
    setup: async (ws) => { await ws.writeFile('data.csv', `name,amount\n${rows.map(([n, v]) => `${n},${v}`).join('\n')}\n`); },
    verify: (ws) => fileIs(ws, 'total.txt', String(total)),
    oracle: [{ toolCalls: [read('data.csv')] }, { toolCalls: [write('total.txt', String(total))] }],
  };
};

/** Difficulty 3: edit one field of a JSON file. */
const jsonEdit: Family = (rng, id) => {
  const config: Record<string, string | number> = { name: word(rng), retries: rng.int(1, 5), mode: word(rng) };
  const key = rng.pick(Object.keys(config));
  const value = typeof config[key] === 'number' ? rng.int(6, 20) : word(rng);
  const edited = { ...config, [key]: value };
  return {
    id, category: 'json', difficulty: 3,
    instruction: `In config.json, set ${key} to ${JSON.stringify(value)} and keep the other fields`,
    setup: async (ws) => { await ws.writeFile('config.json', `${JSON.stringify(config, null, 2)}\n`); },
    async verify(ws) {
      if (!(await ws.exists('config.json'))) return verdict(false, 'config.json is gone');
      let got: unknown;
      try { got = JSON.parse((await ws.readFile('config.json')).toString('utf8')); } catch { return verdict(false, 'config.json is not valid JSON'); }
      const same = JSON.stringify(Object.entries(got as object).sort()) === JSON.stringify(Object.entries(edited).sort());
      return verdict(same, same ? 'config.json edited correctly' : `config.json: expected ${JSON.stringify(edited)}, found ${JSON.stringify(got)}`);
    },
    oracle: [{ toolCalls: [read('config.json')] }, { toolCalls: [write('config.json', `${JSON.stringify(edited, null, 2)}\n`)] }],
  };
};

/** Difficulty 3: a shell pipeline over a log. */
const shellCount: Family = (rng, id) => {
  const level = rng.pick(['ERROR', 'WARN']);
  const lines = Array.from({ length: rng.int(5, 12) }, (_, i) => `${rng.pick(['INFO', 'WARN', 'ERROR'])} event ${i} ${word(rng)}`);
  const count = lines.filter((l) => l.startsWith(level)).length;
  return {
    id, category: 'shell', difficulty: 3,
    instruction: `Count the lines of app.log that start with ${level} and write the number to count.txt`,
    setup: async (ws) => { await ws.writeFile('app.log', `${lines.join('\n')}\n`); },
    verify: (ws) => fileIs(ws, 'count.txt', String(count)),
    oracle: [{ toolCalls: [{ name: 'bash', arguments: { command: `grep -c '^${level}' app.log > count.txt` } }] }],
  };
};

/** The task families, easiest first. */
export const FAMILIES: readonly Family[] = [singleWrite, transform, severalFiles, csvSum, jsonEdit, shellCount, vocabWrite, vocabUpper, vocabUpperSlow];
export const FAMILY_NAMES = ['write', 'transform', 'several-files', 'csv', 'json', 'shell', 'vocab-write', 'vocab-upper', 'vocab-upper-slow'] as const;
/** What the suite draws from when no `families` option is given: the open-vocabulary families. */
export const DEFAULT_FAMILIES = ['write', 'transform', 'several-files', 'csv', 'json', 'shell'] as const;

/** Task `i` of a seed: families in turn, parameters from a per-task seeded generator. */
export function builtinTask(seed: number, i: number, families: readonly number[] = DEFAULT_FAMILIES.map((n) => FAMILY_NAMES.indexOf(n)), split: Split = 'train'): Task {
  const f = families[i % families.length]!;
  return FAMILIES[f]!(new Rng(seed * 7919 + i * 104_729 + f), `builtin-${FAMILY_NAMES[f]}-${seed}-${i}`, split);
}
