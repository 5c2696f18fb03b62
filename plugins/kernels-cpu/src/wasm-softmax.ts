/**
 * Row kernels for attention, run on a score block while it is still in wasm memory: a masked,
 * scaled softmax (f32x4, with a vectorised exp) and its backward, where columns are a multiple
 * of 4 (the matmul pads them to 8) and masked or padded entries come out exactly 0; and the
 * range of non-zero entries of each row.
 */
import { Code, F32, I32, V128, type FunctionDef } from './wasm-asm';

/** Horizontal reduction of the v128 on the stack into an f32, with f32.add or f32.max. */
function reduce(x: Code, tmp: number, op: 'add' | 'max'): void {
  x.set(tmp).get(tmp).f32x4ExtractLane(0);
  for (let lane = 1; lane < 4; lane++) {
    x.get(tmp).f32x4ExtractLane(lane);
    if (op === 'add') x.f32Add(); else x.f32Max();
  }
}

/**
 * softmaxMasked(s, lds, mask, ldm, rows, cols, scale): per row, s = softmax(scale·s) over the
 * first `cols` entries whose mask byte is non-zero, 0 elsewhere up to `cols` rounded up to 4
 * (byte strides lds, ldm). exp is Cephes' expf: 2ⁿ times a degree-6 polynomial on
 * [−ln2/2, ln2/2], relative error ~1e-7.
 */
export function softmaxMaskedFn(): FunctionDef {
  const [s, lds, mask, ldm, rows, cols, scale] = [0, 1, 2, 3, 4, 5, 6];
  const [p, q, j, i] = [7, 8, 9, 10];
  const [vmax, vsum, vx, vm, tmp, negInf, lo, log2e, c1, c2, zero, lane, colsV, four] = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24];
  const poly = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1];
  const polyLocal = 25, vscale = polyLocal + poly.length;
  const x = new Code();
  const splat = (value: number, local: number) => x.f32(value).f32x4Splat().set(local);
  splat(-Infinity, negInf); splat(-87.33654, lo); splat(Math.LOG2E, log2e); splat(0.693359375, c1); splat(-2.12194440e-4, c2);
  x.i32(0).i32x4Splat().set(zero).get(cols).i32x4Splat().set(colsV).i32(4).i32x4Splat().set(four);
  poly.forEach((c, k) => splat(c, polyLocal + k));
  x.get(scale).f32x4Splat().set(vscale);
  // Visits the row in groups of 4 with `lane` = their column indices.
  const rowLoop = (body: () => void) => {
    x.get(s).set(p).get(mask).set(q).get(cols).set(j).v128ConstI32(0, 1, 2, 3).set(lane);
    x.doWhile(() => { body(); x.inc(p, 16).inc(q, 4).get(lane).get(four).i32x4Add().set(lane); }, () => x.get(j).i32(4).sub().tee(j).i32(0).gtS());
  };
  // Lanes that are allowed and inside the row.
  const maskAt = () => x.get(q).v128Load8x4U().get(zero).i32x4Ne().get(lane).get(colsV).i32x4LtS().v128And();
  x.get(rows).set(i);
  x.doWhile(() => {
    // Pass 1: the masked max.
    x.get(negInf).set(vmax);
    rowLoop(() => { x.get(vmax).get(p).v128Load().get(negInf); maskAt(); x.v128Bitselect().f32x4Max().set(vmax); });
    x.get(vmax); reduce(x, tmp, 'max'); x.f32x4Splat().get(vscale).f32x4Mul().set(vmax);
    // Pass 2: e = exp(scale·s − max) where allowed, else 0; sum.
    x.v128Zero().set(vsum);
    rowLoop(() => {
      x.get(p).v128Load().get(vscale).f32x4Mul().get(vmax).f32x4Sub().get(lo).f32x4Max().set(vx);
      x.get(vx).get(log2e).f32x4Mul().f32x4Nearest().set(vm); // n
      x.get(vx).get(vm).get(c1).f32x4Mul().f32x4Sub().get(vm).get(c2).f32x4Mul().f32x4Sub().set(vx); // r
      x.get(polyLocal);
      for (let k = 1; k < poly.length; k++) x.get(vx).f32x4Mul().get(polyLocal + k).f32x4Add();
      x.get(vx).f32x4Mul().get(vx).f32x4Mul().get(vx).f32x4Add().f32(1).f32x4Splat().f32x4Add(); // y
      x.get(vm).i32x4TruncSatF32x4().i32(127).i32x4Splat().i32x4Add().i32(23).i32x4Shl().f32x4Mul(); // · 2ⁿ
      maskAt(); x.v128And().set(vx);
      x.get(p).get(vx).v128Store().get(vsum).get(vx).f32x4Add().set(vsum);
    });
    // Pass 3: normalise.
    x.f32(1).get(vsum); reduce(x, tmp, 'add'); x.f32Div().f32x4Splat().set(vx);
    rowLoop(() => { x.get(p).get(p).v128Load().get(vx).f32x4Mul().v128Store(); });
    x.inc(s, () => x.get(lds)).inc(mask, () => x.get(ldm));
  }, () => x.get(i).i32(1).sub().tee(i));
  return { name: 'softmaxMasked', params: [I32, I32, I32, I32, I32, I32, F32], locals: [[4, I32], [vscale + 1 - vmax, V128]], code: x };
}

/** softmaxBackward(d, ldd, p, ldp, rows, cols, scale): d = scale·p∘(d − Σⱼ p·d), per row in place. */
export function softmaxBackwardFn(): FunctionDef {
  const [d, ldd, p, ldp, rows, cols, scale] = [0, 1, 2, 3, 4, 5, 6];
  const [a, b, j, i] = [7, 8, 9, 10];
  const [vdot, tmp, vscale] = [11, 12, 13];
  const x = new Code();
  x.get(scale).f32x4Splat().set(vscale);
  const rowLoop = (body: () => void) => { x.get(d).set(a).get(p).set(b).get(cols).set(j); x.doWhile(body, () => x.get(j).i32(4).sub().tee(j)); };
  x.get(rows).set(i);
  x.doWhile(() => {
    x.v128Zero().set(vdot);
    rowLoop(() => { x.get(vdot).get(a).v128Load().get(b).v128Load().f32x4Mul().f32x4Add().set(vdot).inc(a, 16).inc(b, 16); });
    x.get(vdot); reduce(x, tmp, 'add'); x.f32x4Splat().set(vdot);
    rowLoop(() => {
      x.get(a).get(a).v128Load().get(vdot).f32x4Sub().get(b).v128Load().f32x4Mul().get(vscale).f32x4Mul().v128Store();
      x.inc(a, 16).inc(b, 16);
    });
    x.inc(d, () => x.get(ldd)).inc(p, () => x.get(ldp));
  }, () => x.get(i).i32(1).sub().tee(i));
  return { name: 'softmaxBackward', params: [I32, I32, I32, I32, I32, I32, F32], locals: [[4, I32], [3, V128]], code: x };
}

/** rowRanges(p, ld, rows, cols, out): per row, i32 [first, end) of its non-zero floats ([0, 0) if none) at out + 8·row. */
export function rowRangesFn(): FunctionDef {
  const [p, ld, rows, cols, out] = [0, 1, 2, 3, 4];
  const [i, a, b, q] = [5, 6, 7, 8];
  const x = new Code();
  const isZero = (offset: number) => x.get(q).f32Load(offset).f32(0).f32Eq();
  x.get(rows).set(i);
  x.doWhile(() => {
    x.i32(0).set(a).get(p).set(q);
    x.whileDo(() => x.get(a).get(cols).ltU().ifElse(() => isZero(0), () => x.i32(0), I32), () => x.inc(a, 1).inc(q, 4));
    x.get(cols).set(b).get(p).get(cols).i32(4).mul().add().set(q);
    x.whileDo(() => x.get(b).get(a).gtU().ifElse(() => { x.get(q).i32(4).sub().set(q); isZero(0); }, () => x.i32(0), I32), () => x.inc(b, -1));
    x.get(out).get(a).i32(0).get(b).get(a).gtU().select().i32Store(0);
    x.get(out).get(b).i32(0).get(b).get(a).gtU().select().i32Store(4);
    x.inc(out, 8).inc(p, () => x.get(ld));
  }, () => x.get(i).i32(1).sub().tee(i));
  return { name: 'rowRanges', params: 5, locals: [[4, I32]], code: x };
}
