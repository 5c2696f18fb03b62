import { ClawGymError, ErrorCodes } from '@clawgym/core';
import type { ReplicaSet, Replica } from '../replicas';

/** Whether a failure says the server is gone or broken (not that this request was bad). */
export const serverFault = (status: number | undefined) => status === undefined || status >= 500;

/**
 * Which replica serves a call, and what happens when one fails: a replica marked down gets no
 * new sessions and is probed (`GET /health`) until it answers; `revive` then brings it to the
 * newest weights (a reason it could not, or undefined) before it serves again.
 */
export class Failover {
  private probe: NodeJS.Timeout | undefined;

  constructor(
    private readonly set: ReplicaSet,
    private readonly o: {
      name: string;
      fetch: typeof fetch;
      probeIntervalMs: number;
      revive: (r: Replica) => Promise<string | undefined>;
    },
  ) {}

  /** The replica a session's call goes to; throws when none answers. */
  pick(sessionId?: string): Replica {
    const replica = this.set.pick(sessionId);
    if (replica) return replica;
    throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `${this.o.name}: no replica answers (${this.set.replicas.map((r) => `${r.baseUrl}: ${r.lastError ?? 'down'}`).join('; ')})`, {
      hint: 'Check that the engine servers are running and reachable; ClawGym probes them and uses each again once it answers.',
    });
  }

  markDown(r: Replica, why: string): void {
    this.set.markDown(r, why);
    this.startProbe();
  }

  close(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  /** Probe replicas marked down; one that answers is brought to the newest weights, then serves again. */
  private startProbe(): void {
    if (this.probe) return;
    this.probe = setInterval(() => {
      const down = this.set.replicas.filter((r) => !r.healthy);
      if (down.length === 0) { this.close(); return; }
      for (const r of down) {
        void (async () => {
          const res = await this.o.fetch(`${r.baseUrl}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
          if (!res?.ok || r.healthy) return;
          const why = await this.o.revive(r);
          if (why) { r.lastError = `weight sync on return failed: ${why}`; return; }
          r.healthy = true;
        })();
      }
    }, this.o.probeIntervalMs);
    this.probe.unref();
  }
}
