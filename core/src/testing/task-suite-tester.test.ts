import { ClawGymError, ErrorCodes } from '../errors';
import type { Task, TaskSuite } from '../contracts/task';
import { checkTaskSuite, describeTaskSuite } from './task-suite-tester';

/** A small sound suite: task i asks for n.txt holding i; train is odd i, test even i. */
function goodTask(i: number, change: Partial<Task> = {}): Task {
  return {
    id: `count-${i}`, category: 'count', instruction: `Write ${i} into n.txt`,
    setup: async (ws) => { await ws.writeFile('in.txt', 'x'); },
    verify: async (ws) => {
      const ok = (await ws.exists('n.txt')) && (await ws.readFile('n.txt')).toString() === String(i);
      return { reward: ok ? 1 : 0, pass: ok, details: ok ? 'n.txt right' : 'n.txt missing or wrong' };
    },
    oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'n.txt', content: String(i) } }] }],
    ...change,
  };
}

const suiteOf = (make: (split: 'train' | 'test') => Task[], name = 'count'): () => TaskSuite => () => ({ name, tasks: async (split) => make(split) });
const sound = (split: 'train' | 'test') => [1, 2, 3, 4, 5, 6].filter((i) => (i % 2 === 0) === (split === 'test')).map((i) => goodTask(i));
const checks = async (make: (split: 'train' | 'test') => Task[]) => (await checkTaskSuite({ suite: suiteOf(make) })).map((p) => `${p.check} ${p.taskId ?? ''}: ${p.message}`);

describeTaskSuite('count (a sound one)', { suite: suiteOf(sound) });

describe('the task-suite tester finds what a broken suite gets wrong', () => {
  it('finds nothing wrong with a sound suite', async () => {
    expect(await checks(sound)).toEqual([]);
  });

  it('an oracle that does not solve its task', async () => {
    const wrong = (split: 'train' | 'test') => sound(split).map((t) => (t.id === 'count-2' ? { ...t, oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'n.txt', content: 'two' } }] }] } : t));
    expect(await checks(wrong)).toEqual(['oracle count-2: the oracle does not pass: reward 0, pass false: n.txt missing or wrong']);
  });

  it('a task that passes untouched (its setup already solves it)', async () => {
    const solved = (split: 'train' | 'test') => sound(split).map((t) => (t.id === 'count-4' ? { ...t, setup: async (ws) => { await ws.writeFile('n.txt', '4'); } } as Task : t));
    expect((await checks(solved)).filter((p) => p.startsWith('untouched'))).toEqual(['untouched count-4: an untouched workspace passes: reward 1: n.txt right']);
  });

  it('splits that overlap, and splits that change from one load to the next', async () => {
    expect(await checks((split) => (split === 'test' ? [goodTask(1), goodTask(2)] : [goodTask(1)]))).toContain('splits count-1: is in both train and test');
    let loads = 0;
    const shifting = () => { const n = loads++; return { name: 'count', tasks: async () => [goodTask(n < 1 ? 1 : 3)] } satisfies TaskSuite; };
    const problems = await checkTaskSuite({ suite: shifting });
    expect(problems.filter((p) => p.check === 'stable').map((p) => p.message)).toEqual([
      'the train split differs between two loads with the same seed (first ids: count-1 then count-3)',
      'the test split differs between two loads with the same seed (first ids: count-1 then count-3)',
    ]);
  });

  it('a verifier that gives another verdict the second time', async () => {
    let calls = 0;
    const flaky = (split: 'train' | 'test') => sound(split).map((t) => (t.id === 'count-6' ? { ...t, verify: async () => ({ reward: 0, pass: false, details: `call ${calls++}` }) } : t));
    expect((await checks(flaky)).filter((p) => p.startsWith('deterministic'))).toHaveLength(2);
  });

  it('a verifier that throws on a junk workspace, or scores it; one that raises a fault naming the suite is fine', async () => {
    const throwing = (split: 'train' | 'test') => sound(split).map((t): Task => {
      // count-2 parses its input without a guard (random bytes make it throw); count-4 scores any other input 1.
      if (t.id === 'count-2') return { ...t, setup: async (ws) => { await ws.writeFile('in.txt', '{"n":2}'); }, verify: async (ws) => ({ reward: 0, pass: false, details: String(JSON.parse((await ws.readFile('in.txt')).toString()).n) }) };
      if (t.id === 'count-4') return { ...t, verify: async (ws) => ({ reward: (await ws.readFile('in.txt')).toString() === 'x' ? 0 : 1, pass: false, details: '' }) };
      return t;
    });
    expect((await checks(throwing)).filter((p) => p.startsWith('junk'))).toEqual([
      expect.stringMatching(/^junk count-2: verify threw on a junk workspace \(random bytes\): .*JSON.*; a verifier returns reward 0 there, or raises a ClawGymError that names the suite "count"$/),
      'junk count-4: a junk workspace (random bytes) scores reward 1: ',
    ]);
    // A parser's message quotes the bytes it choked on; a problem stays one printable line.
    const quoting = (split: 'train' | 'test') => sound(split).map((t): Task => (t.id === 'count-2' ? { ...t, verify: async (ws) => {
      if ((await ws.readFile('in.txt')).toString() !== 'x') throw new SyntaxError('Unexpected token in "\u02e1h:\n\u0000b\ufffd"');
      return t.verify(ws);
    } } : t));
    expect((await checks(quoting)).filter((p) => p.startsWith('junk'))).toEqual([
      'junk count-2: verify threw on a junk workspace (random bytes): Unexpected token in "\u02e1h:\\u000a\\u0000b?"; a verifier returns reward 0 there, or raises a ClawGymError that names the suite "count"',
    ]);
    const faulting = (split: 'train' | 'test') => sound(split).map((t) => ({
      ...t, verify: async (ws: Parameters<Task['verify']>[0]) => {
        if (!(await ws.exists('in.txt'))) throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, 'task suite "count": in.txt is gone');
        return t.verify(ws);
      },
    }));
    expect(await checks(faulting)).toEqual([]);
  });

  it('a verdict out of shape, and a task without an oracle', async () => {
    const odd = (split: 'train' | 'test') => sound(split).map((t) => (t.id === 'count-1' ? { ...t, verify: async () => ({ reward: 2, pass: false, details: '' }) } : t.id === 'count-3' ? { ...t, oracle: undefined } : t));
    const found = await checks(odd);
    expect(found).toContain('verdict count-1: on the untouched workspace its reward 2 is not a number in [0, 1]');
    expect(found).toContain('oracle count-3: has no oracle (set allowMissingOracle to leave such tasks out)');
    expect((await checkTaskSuite({ suite: suiteOf(odd), allowMissingOracle: true })).filter((p) => p.taskId === 'count-3')).toEqual([]);
  });
});
