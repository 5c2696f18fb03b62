/**
 * Warm pools of started containers, as Kubernetes agent-sandbox's warm pools keep ready pods: a
 * sandbox is handed out from a container started ahead of time, and a replacement is started in
 * the background. A container serves one rollout only: handed out once, destroyed after it.
 *
 * A pool exists per key (run, image, limits, bound paths: everything fixed at container creation)
 * and only after the first sandbox of that key was asked for, so a provider that makes one
 * sandbox starts no spares. Spares nobody took within `idleMs` are removed.
 */
export interface WarmPoolOptions<T> {
  /** Start one item (a started container with its host folder). */
  make(): Promise<T>;
  /** Remove an item that will not be handed out. */
  dispose(item: T): Promise<void>;
  /** Is a spare still usable (its container running)? */
  alive(item: T): Promise<boolean>;
  /** Spares kept ready. */
  size: number;
  /** Remove the spares after this long without a hand-out. */
  idleMs: number;
}

/** One key's pool. */
export class WarmPool<T> {
  private readonly spares: Promise<T | undefined>[] = [];
  private idleTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: WarmPoolOptions<T>) {}

  /** A started item: a ready spare when there is one, else one made now. Refills in the background. */
  async take(): Promise<T> {
    if (this.closed) return this.o.make();
    this.armIdle();
    let got: T | undefined;
    while (!got && this.spares.length) {
      const spare = await this.spares.shift()!;
      if (spare && await this.o.alive(spare)) got = spare;
      else if (spare) void this.o.dispose(spare).catch(() => undefined);
    }
    this.refill();
    return got ?? this.o.make();
  }

  /** Spares ready or being started. */
  get pending(): number { return this.spares.length; }

  private refill(): void {
    while (!this.closed && this.spares.length < this.o.size) {
      // A failed background start is no error of anyone's yet: take() then makes one itself,
      // and that error reaches the caller.
      this.spares.push(this.o.make().catch(() => undefined));
    }
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.drain(), this.o.idleMs);
    this.idleTimer.unref();
  }

  /** Remove every spare (started or still starting). */
  async drain(): Promise<void> {
    clearTimeout(this.idleTimer);
    const spares = this.spares.splice(0);
    await Promise.all(spares.map(async (p) => { const s = await p; if (s) await this.o.dispose(s).catch(() => undefined); }));
  }

  /** Drain and start no more spares. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }
}
