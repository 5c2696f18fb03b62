/**
 * Helper threads for the wasm matmul: workers instantiate the same module on the same shared
 * memory and compute row panels of C, while the calling thread blocks (briefly polling, then in
 * Atomics.wait) so the matmul stays synchronous. See cpu.ts for what each choice measured.
 */
import { Worker } from 'node:worker_threads';
import type { WasmMemory, WasmModule } from './wasm-asm';

/** Control words shared with the workers (Int32Array indices). */
const GEN = 0, NEXT = 1, DONE = 2, EXIT = 3, FAILED = 4, PARAMS = 5; // params: a, b, c, mp, np, k, ldc, then the bytes per panel of A and of C

/**
 * Threads claim row panels in shrinking chunks (a quarter of what is left, at least one panel:
 * guided scheduling), so the first claims are large and the last ones small. `next` packs the
 * job's generation (high 15 bits) with the next panel (low 16 bits; 0xffff once the job is
 * closed), so a thread that wakes late can neither claim from a finished job nor from a newer
 * one; and the caller only waits for chunks a worker actually took, so a worker preempted by
 * another process costs at most the chunk it holds. The same source runs in the workers.
 */
const CLAIM = `function claim(ctl, gen, mp) {
  for (;;) {
    const v = Atomics.load(ctl, ${NEXT}), first = v & 0xffff;
    if (v >>> 16 !== (gen & 0x7fff) || first >= mp) return -1;
    if (Atomics.compareExchange(ctl, ${NEXT}, v, v + chunkAt(first, mp)) === v) return first;
  }
}
function chunkAt(first, mp) { return Math.max(1, Math.ceil((mp - first) / 4)); }`;
const { claim, chunkAt } = new Function(`${CLAIM}; return { claim, chunkAt };`)() as {
  claim(ctl: Int32Array, gen: number, mp: number): number;
  chunkAt(first: number, mp: number): number;
};
const closed = (gen: number) => ((gen & 0x7fff) << 16) | 0xffff;

/**
 * A helper thread: waits for the generation word to change, then claims and computes chunks.
 * After a job it polls for SPIN_MS before sleeping in Atomics.wait: back-to-back matmuls then
 * start in ~1 µs instead of the ~40 µs a futex wake-up takes, which is what makes two threads
 * pay from ~1M multiply-adds on.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, memory, ctl, spinMs } = workerData;
const { gemm } = new WebAssembly.Instance(module, { env: { memory } }).exports;
${CLAIM}
let seen = Atomics.load(ctl, ${GEN});
for (;;) {
  const until = performance.now() + spinMs;
  while (Atomics.load(ctl, ${GEN}) === seen && performance.now() < until);
  while (Atomics.load(ctl, ${GEN}) === seen) Atomics.wait(ctl, ${GEN}, seen);
  if (Atomics.load(ctl, ${EXIT})) process.exit(0);
  seen = Atomics.load(ctl, ${GEN});
  const [a, b, c, mp, np, k, ldc, aPanel, cPanel] = ctl.subarray(${PARAMS}, ${PARAMS} + 9);
  for (let i; (i = claim(ctl, seen, mp)) >= 0;) {
    const n = chunkAt(i, mp);
    try { gemm(a + i * aPanel, b, c + i * cPanel, n, np, k, ldc); }
    catch { Atomics.store(ctl, ${FAILED}, 1); }
    Atomics.add(ctl, ${DONE}, n);
    Atomics.notify(ctl, ${DONE});
  }
}`;
const SPIN_MS = 0.5;

type Gemm = (a: number, b: number, c: number, mp: number, np: number, k: number, ldc: number) => void;

/** Worker threads sharing one engine's products; falls back to the calling thread for good when one fails. */
export class GemmThreads {
  private workers: Worker[] = [];
  private ctl?: Int32Array;
  /** Set when a worker could not start or failed: from then on, one thread. */
  private broken = false;
  /** Decaying count of jobs where the worker finished late, and until when (performance.now()) to use one thread. */
  private lateness = 0;
  private soloUntil = 0;

  /** @param threads total threads, the calling one included. */
  constructor(private readonly module: WasmModule, private readonly memory: WasmMemory, readonly threads: number) {}

  /** Whether products should be shared now (not when broken, or backing off from a busy machine). */
  get available(): boolean {
    return this.threads > 1 && !this.broken && performance.now() >= this.soloUntil;
  }

  /**
   * C = packed A · packed B with the module's gemm (byte addresses and strides), its `mp` row
   * panels (< 0xffff) of `rowsPerPanel` rows claimed in chunks by this thread and the workers.
   */
  run(gemm: Gemm, aPack: number, bPack: number, cPad: number, mp: number, np: number, k: number, ldPad: number, rowsPerPanel: number): void {
    const ctl = this.startWorkers();
    if (!ctl) { gemm(aPack, bPack, cPad, mp, np, k, ldPad); return; }
    const gen = (ctl[GEN]! + 1) | 0, aPanel = rowsPerPanel * k * 4, cPanel = rowsPerPanel * ldPad;
    ctl.set([aPack, bPack, cPad, mp, np, k, ldPad, aPanel, cPanel], PARAMS);
    Atomics.store(ctl, DONE, 0);
    Atomics.store(ctl, NEXT, (gen & 0x7fff) << 16);
    Atomics.store(ctl, GEN, gen);
    Atomics.notify(ctl, GEN);
    const t0 = performance.now();
    for (let i; (i = claim(ctl, gen, mp)) >= 0;) {
      const n = chunkAt(i, mp);
      gemm(aPack + i * aPanel, bPack, cPad + i * cPanel, n, np, k, ldPad);
      Atomics.add(ctl, DONE, n);
    }
    // Wait for the chunks a worker took: poll briefly (they end about when ours do), then sleep.
    const t1 = performance.now(), until = t1 + 2;
    let done = Atomics.load(ctl, DONE);
    while (done < mp && performance.now() < until) done = Atomics.load(ctl, DONE);
    for (let waited = 0; done < mp && waited < 10_000; waited += 100) {
      Atomics.wait(ctl, DONE, done, 100);
      done = Atomics.load(ctl, DONE);
    }
    Atomics.store(ctl, NEXT, closed(gen));
    // Waiting longer than our own chunks took means the worker was preempted: the other core is
    // busy with other work. When that keeps happening, stay on one thread for a second.
    const late = performance.now() - t1 > Math.max(0.1, t1 - t0);
    this.lateness = this.lateness * 0.75 + (late ? 1 : 0);
    if (this.lateness > 1.5) { this.soloUntil = performance.now() + 1000; this.lateness = 0; }
    if (done < mp || Atomics.load(ctl, FAILED)) {
      // A worker failed or hangs (10 s): redo the whole product here and stay single-threaded.
      this.broken = true;
      void this.dispose();
      gemm(aPack, bPack, cPad, mp, np, k, ldPad);
    }
  }

  /** The control array, starting the workers on first use; undefined when threads are unavailable. */
  private startWorkers(): Int32Array | undefined {
    if (this.ctl || this.broken) return this.ctl;
    try {
      const ctl = new Int32Array(new SharedArrayBuffer((PARAMS + 9) * 4));
      for (let w = 0; w < this.threads - 1; w++) {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: this.module, memory: this.memory, ctl, spinMs: SPIN_MS } });
        worker.unref();
        this.workers.push(worker);
      }
      return (this.ctl = ctl);
    } catch {
      this.broken = true;
      void this.dispose();
      return undefined;
    }
  }

  /** Stops the helper threads. */
  async dispose(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    if (this.ctl) {
      Atomics.store(this.ctl, EXIT, 1);
      Atomics.add(this.ctl, GEN, 1);
      Atomics.notify(this.ctl, GEN);
    }
    this.ctl = undefined;
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
