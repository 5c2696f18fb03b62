import { readFile, writeFile } from 'node:fs/promises';
import { ClawGymError, ErrorCodes } from '@clawgym/core';

/** One tensor to write: name, shape, float32 data. */
export interface Tensor { name: string; shape: number[]; data: Float32Array }

/**
 * Write tensors in the safetensors format: an 8-byte little-endian header length, a JSON header
 * `{name: {dtype: "F32", shape, data_offsets: [begin, end]}, "__metadata__": {...}}` padded with
 * spaces to a multiple of 8 bytes, then the little-endian data, in header order.
 */
export async function saveSafetensors(file: string, tensors: readonly Tensor[], metadata: Record<string, string> = {}): Promise<void> {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.data.length * 4;
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((json.length + 8) % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + head.length + offset);
  out.writeBigUInt64LE(BigInt(head.length), 0);
  head.copy(out, 8);
  let at = 8 + head.length;
  for (const t of tensors) {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(out, at);
    at += t.data.byteLength;
  }
  await writeFile(file, out);
}

/** Read a safetensors file of F32 tensors. */
export async function loadSafetensors(file: string): Promise<{ tensors: Map<string, Tensor>; metadata: Record<string, string> }> {
  const buf = await readFile(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const tensors = new Map<string, Tensor>();
  let metadata: Record<string, string> = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') { metadata = info as unknown as Record<string, string>; continue; }
    if (info.dtype !== 'F32') throw new ClawGymError(ErrorCodes.CHECKPOINT_MISMATCH, `${file}: tensor ${name} has dtype ${info.dtype}; only F32 is supported`, { hint: 'Convert the checkpoint to float32 safetensors.' });
    const [b, e] = info.data_offsets;
    const data = new Float32Array((e - b) / 4);
    Buffer.from(data.buffer).set(buf.subarray(8 + n + b, 8 + n + e));
    tensors.set(name, { name, shape: info.shape, data });
  }
  return { tensors, metadata };
}
