/** One engine server of a set: where it is, whether it answers, and the weights it serves. */
export interface Replica {
  readonly baseUrl: string;
  healthy: boolean;
  /** The policy version this replica serves (what it reported after its last weight sync). */
  version: number;
  /** When it last failed (ms since the epoch), for the probe's backoff. */
  failedAt?: number;
  /** Why it was marked down, for errors that name it. */
  lastError?: string;
  /** vLLM full-weight transfer initialised on this server. */
  transferReady: boolean;
  /** What this SGLang server takes (pause modes, `/model_info`), learnt at its first sync. */
  sglang?: { modelInfo: boolean };
  /** Whether this SGLang server applies `sampling_seed` (`--enable-deterministic-inference`), once learnt. */
  sglangSeed?: boolean;
  /** Rollouts assigned so far (load spreading). */
  sessions: number;
}

/**
 * The engine servers one engine spreads rollouts over. A rollout sticks to the replica its first
 * call went to (its prefix cache stays warm there); new rollouts go to the healthy replica with
 * the fewest rollouts so far. A replica that fails is marked down and gets no new rollouts until
 * a probe finds it answering again (and it was brought to the newest weights).
 */
export class ReplicaSet {
  readonly replicas: Replica[];
  private readonly sticky = new Map<string, Replica>();

  constructor(baseUrls: readonly string[], version = 0) {
    this.replicas = baseUrls.map((u) => ({ baseUrl: u.replace(/\/+$/, ''), healthy: true, version, transferReady: false, sessions: 0 }));
  }

  /** The replica a session's call goes to; undefined when none is healthy. */
  pick(sessionId?: string): Replica | undefined {
    const held = sessionId === undefined ? undefined : this.sticky.get(sessionId);
    if (held?.healthy) return held;
    // A rollout whose replica died stays there: its calls fail (an infrastructure failure), and
    // its retry, a new session, goes elsewhere. Moving it would lose the prefix cache silently.
    if (held) return held;
    const healthy = this.replicas.filter((r) => r.healthy);
    if (healthy.length === 0) return undefined;
    const r = healthy.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    if (sessionId !== undefined) {
      r.sessions++;
      this.sticky.set(sessionId, r);
      if (this.sticky.size > MAX_STICKY) this.sticky.delete(this.sticky.keys().next().value!);
    }
    return r;
  }

  markDown(r: Replica, why: string): void {
    r.healthy = false;
    r.failedAt = Date.now();
    r.lastError = why;
    r.sglang = undefined; // what comes back may be another build: learn it again
  }

  /** The lowest version any healthy replica serves (what every new call is at least on). */
  minVersion(): number {
    const healthy = this.replicas.filter((r) => r.healthy);
    return Math.min(...(healthy.length ? healthy : this.replicas).map((r) => r.version));
  }
}

/** Sessions remembered for stickiness: far more than rollouts in flight. */
const MAX_STICKY = 20_000;
