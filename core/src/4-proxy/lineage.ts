import type { CallRole, Lineage, PromptOrigin } from '../contracts/records';

/**
 * Which line of conversation each call of a session continues, and what started each line.
 * A call that extends an earlier one (reuse) or re-sends it (retry) is on that call's line. A
 * call that does neither (a fork) starts a line: a side call's own conversation (`subagent`,
 * `compaction`, `title`, `memory`, `side`, by the call's role); the main agent's first (`root`,
 * even after a side call such as a session title); the main agent going on from a compaction's
 * summary (`compaction`, started by that call); or a main history the harness rewrote (`fork`).
 */
export class LineageTracker {
  private readonly lineOf = new Map<number, Lineage>();
  private lines = 0;
  private mainSeen = false;
  /**
   * The last compaction call whose summary no main call has gone on from yet. A main call that
   * stays on its line (extends or re-sends the old history) has not: a harness that compacts in
   * the background (Copilot CLI) sends those while the summary is being written.
   */
  private compaction?: number;

  assign(callIndex: number, origin: PromptOrigin, role: CallRole | undefined): Lineage {
    const parent = origin.kind === 'reuse' ? origin.parentCall : origin.kind === 'retry' ? origin.of : undefined;
    const inherited = parent === undefined ? undefined : this.lineOf.get(parent);
    let lineage: Lineage;
    const side = role !== undefined && role !== 'main';
    if (inherited) lineage = inherited;
    else if (side) lineage = { id: this.lines++, cause: role };
    else if (!this.mainSeen) lineage = { id: this.lines++, cause: 'root' };
    else if (this.compaction !== undefined) lineage = { id: this.lines++, cause: 'compaction', startedBy: this.compaction };
    else lineage = { id: this.lines++, cause: 'fork' };
    if (role === 'compaction') this.compaction = callIndex;
    else if (!side) {
      if (!inherited) this.compaction = undefined;
      this.mainSeen = true;
    }
    this.lineOf.set(callIndex, lineage);
    return lineage;
  }
}
