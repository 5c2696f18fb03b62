/**
 * Matrix multiply in WebAssembly SIMD: operands are copied into one (shared) wasm memory,
 * packed into 4-row panels of A and 8-column panels of B (which absorbs transA/transB and
 * zero-pads the edges), multiplied by a 4×8 f32x4 register-tiled micro-kernel, and unpacked
 * into C. Large products share their row panels with worker threads (gemm-threads.ts).
 */
import { GemmThreads } from './gemm-threads';
import { assemble, Code, I32, V128, wasmApi, type FunctionDef, type WasmMemory, type WasmModule } from './wasm-asm';
import { rowRangesFn, softmaxBackwardFn, softmaxMaskedFn } from './wasm-softmax';

/** Rows of an A panel and columns of a B panel (two f32x4 vectors). */
export const MR = 4;
export const NR = 8;
const MAX_PAGES = 16384; // 1 GiB of address space, reserved not committed

/** gemm(a, b, c, mp, np, k, ldc): C[mp·4 × np·8] = packedA · packedB, ldc in bytes. */
function gemmFn(): FunctionDef {
  const [a, b, c, mp, np, k, ldc] = [0, 1, 2, 3, 4, 5, 6];
  const [jp, ip, ap, bp, p, crow, bbase, ccol] = [7, 8, 9, 10, 11, 12, 13, 14];
  const acc = 15; // MR × 2 accumulators, then b0, b1, the broadcast a
  const bv = acc + MR * 2, av = bv + 2;
  const x = new Code();
  x.get(b).set(bbase).get(c).set(ccol).get(np).set(jp);
  x.doWhile(() => {
    x.get(a).set(ap).get(ccol).set(crow).get(mp).set(ip);
    x.doWhile(() => {
      for (let i = 0; i < MR * 2; i++) x.v128Zero().set(acc + i);
      x.get(bbase).set(bp).get(k).set(p);
      x.doWhile(() => {
        x.get(bp).v128Load(0).set(bv).get(bp).v128Load(16).set(bv + 1);
        for (let r = 0; r < MR; r++) {
          x.get(ap).v128Load32Splat(r * 4).set(av);
          for (let v = 0; v < 2; v++) x.get(acc + 2 * r + v).get(av).get(bv + v).f32x4Mul().f32x4Add().set(acc + 2 * r + v);
        }
        x.inc(ap, MR * 4).inc(bp, NR * 4);
      }, () => x.get(p).i32(1).sub().tee(p));
      for (let r = 0; r < MR; r++) {
        for (let v = 0; v < 2; v++) {
          x.get(crow);
          if (r) x.get(ldc).i32(r).mul().add();
          x.get(acc + 2 * r + v).v128Store(v * 16);
        }
      }
      x.inc(crow, () => x.get(ldc).i32(MR).mul());
    }, () => x.get(ip).i32(1).sub().tee(ip));
    x.get(bp).set(bbase).inc(ccol, NR * 4);
  }, () => x.get(jp).i32(1).sub().tee(jp));
  return { name: 'gemm', params: 7, locals: [[8, I32], [MR * 2 + 3, V128]], code: x };
}

/**
 * pack(src, sr, sp, R, K, W, dst): panels of W ∈ {4, 8} rows r of X(r, p) = src[r·sr + p·sp]
 * (byte strides), laid out [panel][p][w], rows past R zero. Contiguous rows (sr = 4) copy by
 * f32x4; others gather.
 */
function packFn(): FunctionDef {
  const [src, sr, sp, R, K, W, dst] = [0, 1, 2, 3, 4, 5, 6];
  const [d, r0, pp, p, q, r, w, full] = [7, 8, 9, 10, 11, 12, 13, 14];
  const x = new Code();
  x.get(dst).set(d).i32(0).set(r0);
  x.doWhile(() => {
    x.get(src).get(r0).get(sr).mul().add().set(pp).get(K).set(p);
    x.get(sr).i32(4).eq().get(r0).get(W).add().get(R).leU().and().set(full);
    x.doWhile(() => {
      x.get(pp).set(q).get(W).set(w);
      x.get(full).ifElse(() => {
        x.doWhile(() => {
          x.get(d).get(q).v128Load().v128Store().inc(d, 16).inc(q, 16);
        }, () => x.get(w).i32(4).sub().tee(w));
      }, () => {
        x.get(r0).set(r);
        x.doWhile(() => {
          x.get(r).get(R).ltU().ifElse(() => x.get(d).get(q).f32Load().f32Store(), () => x.get(d).f32Zero().f32Store());
          x.inc(d, 4).inc(q, () => x.get(sr)).inc(r, 1);
        }, () => x.get(w).i32(1).sub().tee(w));
      });
      x.inc(pp, () => x.get(sp));
    }, () => x.get(p).i32(1).sub().tee(p));
    x.inc(r0, () => x.get(W));
  }, () => x.get(r0).get(R).ltU());
  return { name: 'pack', params: 7, locals: [[8, I32]], code: x };
}

/** unpack(src, lds, dst, ldd, m, n, acc): dst[i, j] (+)= src[i, j] for an m×n block (byte strides). */
function unpackFn(): FunctionDef {
  const [src, lds, dst, ldd, m, n, acc] = [0, 1, 2, 3, 4, 5, 6];
  const [i, s, d, j] = [7, 8, 9, 10];
  const x = new Code();
  const step = (load: () => void, add: () => void, store: () => void, bytes: number) => {
    x.get(acc).ifElse(() => { x.get(d).get(s); load(); x.get(d); load(); add(); store(); }, () => { x.get(d).get(s); load(); store(); });
    x.inc(s, bytes).inc(d, bytes).get(j).i32(bytes / 4).sub().set(j);
  };
  x.get(m).set(i);
  x.doWhile(() => {
    x.get(src).set(s).get(dst).set(d).get(n).set(j);
    x.whileDo(() => x.i32(4).get(j).leU(), () => step(() => x.v128Load(), () => x.f32x4Add(), () => x.v128Store(), 16));
    x.whileDo(() => x.get(j), () => step(() => x.f32Load(), () => x.f32Add(), () => x.f32Store(), 4));
    x.inc(src, () => x.get(lds)).inc(dst, () => x.get(ldd));
  }, () => x.get(i).i32(1).sub().tee(i));
  return { name: 'unpack', params: 7, locals: [[4, I32]], code: x };
}

/** The module's functions; addresses and strides in bytes. */
export interface GemmExports {
  gemm(a: number, b: number, c: number, mp: number, np: number, k: number, ldc: number): void;
  pack(src: number, sr: number, sp: number, R: number, K: number, W: number, dst: number): void;
  unpack(src: number, lds: number, dst: number, ldd: number, m: number, n: number, acc: number): void;
  softmaxMasked(s: number, lds: number, mask: number, ldm: number, rows: number, cols: number, scale: number): void;
  softmaxBackward(d: number, ldd: number, p: number, ldp: number, rows: number, cols: number, scale: number): void;
  rowRanges(p: number, ld: number, rows: number, cols: number, out: number): void;
}

/**
 * Runs on C while it is still in wasm memory, before it is written out: `c` is its byte
 * address (rows padded to 4, columns to 8), `ld` its row stride in bytes, and memory from
 * `free` on is scratch (call {@link WasmGemm.reserve} before using it).
 */
export type GemmEpilogue = (engine: WasmGemm, c: number, ld: number, free: number) => void;

let cachedModule: WasmModule | undefined;
/** The compiled module, or undefined where WebAssembly SIMD or shared memory is unavailable. */
export function gemmModule(): WasmModule | undefined {
  if (cachedModule || !wasmApi) return cachedModule;
  try {
    const bytes = assemble([gemmFn(), packFn(), unpackFn(), softmaxMaskedFn(), softmaxBackwardFn(), rowRangesFn()], MAX_PAGES);
    if (!wasmApi.validate(bytes)) return undefined;
    return (cachedModule = new wasmApi.Module(bytes));
  } catch {
    return undefined;
  }
}

/**
 * A strided view of a row-major matrix operand: element (r, c) is `data[offset + r·ld + c]`,
 * or, for an operand resident in the engine's memory, the float at byte address
 * `addr + 4·(offset + r·ld + c)` (then `data` is not read).
 */
export interface Operand { data?: Float32Array; addr?: number; offset: number; ld: number }

const align16 = (n: number) => (n + 15) & ~15;

/** The wasm matmul engine: one memory, one instance, optionally helper threads. */
export class WasmGemm {
  private readonly memory: WasmMemory;
  /** The module's functions, on this engine's memory. */
  readonly fns: GemmExports;
  /** Views of the memory (replaced when it grows: read them after any allocation). */
  f32: Float32Array;
  u8: Uint8Array;
  /** First free byte: memory below holds resident operands (see {@link alloc}). */
  private top = 0;
  private readonly threads: GemmThreads;

  /**
   * @param threads total threads for large products (1 = main thread only).
   * @param minThreadFlops products below this many multiply-adds stay on the main thread.
   */
  constructor(module: WasmModule, threads = 1, readonly minThreadFlops = 1 << 20) {
    const api = wasmApi!;
    this.memory = new api.Memory({ initial: 16, maximum: MAX_PAGES, shared: true });
    this.fns = new api.Instance(module, { env: { memory: this.memory } }).exports as unknown as GemmExports;
    this.threads = new GemmThreads(module, this.memory, threads);
    this.f32 = new Float32Array(this.memory.buffer);
    this.u8 = new Uint8Array(this.memory.buffer);
  }

  /** Grows the memory to at least `bytes`. */
  reserve(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / 65536));
    if (this.f32.byteLength !== this.memory.buffer.byteLength) {
      this.f32 = new Float32Array(this.memory.buffer);
      this.u8 = new Uint8Array(this.memory.buffer);
    }
  }

  /**
   * Allocates `floats` resident floats (contents undefined) and returns their byte address,
   * copying `from` there when given. Release with {@link release}(mark) where mark = {@link mark}().
   */
  alloc(floats: number, from?: Float32Array): number {
    const addr = this.top;
    this.top = align16(addr + floats * 4);
    this.reserve(this.top);
    if (from) this.f32.set(from.subarray(0, floats), addr >> 2);
    return addr;
  }
  mark(): number { return this.top; }
  release(mark: number): void { this.top = mark; }

  /** Copies `length` floats of `op` from its offset to byte address `at`. */
  private put(op: Float32Array, offset: number, length: number, at: number): void {
    this.f32.set(op.subarray(offset, offset + length), at >> 2);
  }

  /** Byte address of an operand's `length` floats: resident in place, else copied to `at`. */
  private stage(op: Operand, length: number, at: number): number {
    if (op.addr !== undefined) return op.addr + op.offset * 4;
    this.put(op.data!, op.offset, length, at);
    return at;
  }

  /**
   * C (+)= op(A)·op(B) for strided operands; op(A) is m×k, op(B) k×n, all sizes ≥ 1.
   * Non-transposed A(i, p) = A[i·ld + p]; transposed A(i, p) = A[p·ld + i]; likewise B.
   */
  gemm(A: Operand, transA: boolean, B: Operand, transB: boolean, C: Operand, m: number, k: number, n: number, accumulate: boolean, epilogue?: GemmEpilogue): void {
    const mp = Math.ceil(m / MR), np = Math.ceil(n / NR);
    const aLen = transA ? (k - 1) * A.ld + m : (m - 1) * A.ld + k;
    const bLen = transB ? (n - 1) * B.ld + k : (k - 1) * B.ld + n;
    const cLen = (m - 1) * C.ld + n;
    const aRaw = this.top, bRaw = align16(aRaw + (A.addr === undefined ? aLen * 4 : 0));
    const cRaw = align16(bRaw + (B.addr === undefined ? bLen * 4 : 0));
    const aPack = align16(cRaw + (C.addr === undefined ? cLen * 4 : 0)), bPack = aPack + mp * MR * k * 4, cPad = bPack + np * NR * k * 4;
    const ldPad = np * NR * 4, free = align16(cPad + mp * MR * ldPad);
    this.reserve(free);
    const a = this.stage(A, aLen, aRaw), b = this.stage(B, bLen, bRaw);
    const { pack, unpack } = this.fns;
    pack(a, transA ? 4 : A.ld * 4, transA ? A.ld * 4 : 4, m, k, MR, aPack);
    pack(b, transB ? B.ld * 4 : 4, transB ? 4 : B.ld * 4, n, k, NR, bPack);
    this.multiply(aPack, bPack, cPad, mp, np, k, ldPad);
    epilogue?.(this, cPad, ldPad, free);
    if (C.addr !== undefined) {
      unpack(cPad, ldPad, C.addr + C.offset * 4, C.ld * 4, m, n, accumulate ? 1 : 0);
      return;
    }
    if (accumulate || C.ld !== n) this.put(C.data!, C.offset, cLen, cRaw);
    unpack(cPad, ldPad, cRaw, C.ld * 4, m, n, accumulate ? 1 : 0);
    C.data!.set(this.f32.subarray(cRaw >> 2, (cRaw >> 2) + cLen), C.offset);
  }

  /** The product, shared with the helper threads where it is large enough and they are available. */
  private multiply(aPack: number, bPack: number, cPad: number, mp: number, np: number, k: number, ldPad: number): void {
    if (this.threads.available && mp >= 2 && mp < 0xffff && mp * np * k * MR * NR >= this.minThreadFlops) {
      this.threads.run(this.fns.gemm, aPack, bPack, cPad, mp, np, k, ldPad, MR);
    } else {
      this.fns.gemm(aPack, bPack, cPad, mp, np, k, ldPad);
    }
  }

  /** Stops the helper threads (they restart on the next large product). */
  dispose(): Promise<void> {
    return this.threads.dispose();
  }
}
