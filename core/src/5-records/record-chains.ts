/**
 * Where rebuilt prompts live: in chains, one growing Int32Array per line of calls that extend one
 * another. A call whose prompt is an earlier call's prompt and output plus new ids writes only
 * its new ids (and its output) at the end of that call's chain, and its prompt is a view of the
 * chain: a session's records, all of them in memory, take the memory of its new tokens (plus a
 * copy of the shared prefix at each fork), not of every call's whole prompt.
 *
 * The same placement runs twice: first on lengths only (to size each chain before it is
 * allocated, so no chain is ever copied to grow), then on the ids.
 */

/** Where a call's ids are: its chain, and whether its output follows its prompt there. */
export interface Placed { chain: number; promptEnd: number; outputInChain: boolean }

/** What placing a call did: `copy` — a new chain that starts with `keep` ids of the base call. */
export type Placement = Placed & { tailAt: number; copy: boolean };

/** Calls placed so far (only those later calls still build on are kept) and each chain's end. */
export class ChainPlanner {
  private readonly ends: number[] = [];
  readonly capacity: number[] = [];

  /**
   * Place a call whose prompt is the first `keep` ids of `base`'s prompt and output (none
   * without a base) followed by `tail` new ids, and whose output has `output` ids.
   */
  place(base: Placed | undefined, keep: number, tail: number, output: number): Placement {
    let chain: number;
    let tailAt: number;
    let copy = false;
    // The base's ids are in its chain up to where its prompt ends, or past its output too.
    const valid = base ? base.promptEnd + (base.outputInChain ? Number.POSITIVE_INFINITY : 0) : 0;
    if (base && keep <= valid && (tail === 0 || this.ends[base.chain] === keep)) {
      chain = base.chain;
      tailAt = keep;
    } else {
      chain = this.ends.length;
      this.ends.push(0);
      this.capacity.push(0);
      tailAt = base ? keep : 0;
      copy = base !== undefined && keep > 0;
      this.ends[chain] = tailAt;
    }
    const promptEnd = tailAt + tail;
    if (tail > 0) this.ends[chain] = promptEnd;
    // The output joins the chain only where the prompt is the chain's tip.
    const outputInChain = this.ends[chain] === promptEnd;
    if (outputInChain) this.ends[chain] = promptEnd + output;
    this.capacity[chain] = Math.max(this.capacity[chain]!, this.ends[chain]!);
    return { chain, promptEnd, outputInChain, tailAt, copy };
  }
}
