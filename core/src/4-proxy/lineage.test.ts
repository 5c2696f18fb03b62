import { LineageTracker } from './lineage';
import type { CallRole, PromptOrigin } from '../contracts/records';

const fork: PromptOrigin = { kind: 'fork', reason: 'x' };
const reuse = (parentCall: number): PromptOrigin => ({ kind: 'reuse', parentCall, reusedTokens: 1 });
const lines = (calls: [PromptOrigin, CallRole | undefined][]) => {
  const t = new LineageTracker();
  return calls.map(([origin, role], i) => t.assign(i, origin, role));
};

describe('lineages of a session\'s calls', () => {
  it('a session title before the agent, a subagent, then the agent again: the title and the subagent are lines of their own; the agent\'s is root throughout', () => {
    // OpenCode 1.18.33 with a task subagent: title, main, subagent, main (extends call 1).
    expect(lines([[fork, 'title'], [fork, 'main'], [fork, 'subagent'], [reuse(1), 'main']])).toEqual([
      { id: 0, cause: 'title' }, { id: 1, cause: 'root' }, { id: 2, cause: 'subagent' }, { id: 1, cause: 'root' },
    ]);
  });

  it('after a compaction the agent goes on from the summary: a new line, started by the compaction call; a retry stays on its line', () => {
    // OpenCode 1.18.33 past its context limit: title, main, main, compaction, main (from the summary), a retry of it, then an extension.
    expect(lines([[fork, 'title'], [fork, 'main'], [reuse(1), 'main'], [fork, 'compaction'], [fork, 'main'], [{ kind: 'retry', of: 4 }, 'main'], [reuse(5), 'main']])).toEqual([
      { id: 0, cause: 'title' }, { id: 1, cause: 'root' }, { id: 1, cause: 'root' }, { id: 2, cause: 'compaction' },
      { id: 3, cause: 'compaction', startedBy: 3 }, { id: 3, cause: 'compaction', startedBy: 3 }, { id: 3, cause: 'compaction', startedBy: 3 },
    ]);
  });

  it('a compaction in the background: the agent\'s call that re-sends its old history meanwhile stays on its line; the next that does not goes on from the summary', () => {
    // GitHub Copilot CLI 1.0.102 near maxPromptTokens: main, compaction, a re-send of call 0 (its history cut), main from the summary.
    expect(lines([[fork, 'main'], [fork, 'compaction'], [{ kind: 'retry', of: 0 }, 'main'], [fork, 'main']])).toEqual([
      { id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }, { id: 0, cause: 'root' }, { id: 2, cause: 'compaction', startedBy: 1 },
    ]);
  });

  it('a main history the harness rewrote, with no compaction before it, is a fork; an unclassified session\'s first call is root', () => {
    expect(lines([[fork, undefined], [reuse(0), undefined], [fork, undefined]]).map((l) => l.cause)).toEqual(['root', 'root', 'fork']);
  });
});
