import type { GenerateRequest } from '@clawgym/core';
import type { Json, Step } from './sse';

/**
 * One server's generation protocol: the route, the request body that sends our prompt ids
 * verbatim, how a stream chunk reads, and which weights version a chunk says served it.
 */
export interface TokenIdWire {
  /** The generation route (`/v1/completions`, `/generate`). */
  readonly path: string;
  /** The default of {@link Engine.logprobs} for this server. */
  readonly logprobs: 'processed' | 'raw';
  /**
   * The request body; `adapter` names the LoRA adapter the replica serves, if any; `seeded` says
   * whether the replica applies the request's seed (see {@link seedProbe}).
   */
  body(request: GenerateRequest, stopIds: number[], adapter: string | undefined, seeded?: boolean): Json;
  /** Where a seed must not be sent blindly: learns whether a server applies it. */
  readonly seedProbe?: boolean;
  /** One chunk's new tokens; `yielded` counts the tokens of the stream so far. */
  parse(chunk: Json, yielded: number): Step;
  /** The version a chunk says served it, when it says one; `adapter` as in {@link body}. */
  version(chunk: Json, adapter: string | undefined): number | undefined;
}
