import { buf as crc32c } from 'crc-32/crc32c';

/**
 * TFRecord framing, as TensorFlow's `RecordWriter` writes every event file
 * (tensorflow/core/lib/io/record_writer.cc): the payload's length as a little-endian uint64,
 * the masked CRC32C of those 8 bytes, the payload, the masked CRC32C of the payload.
 */
export function tfRecord(data: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

/** TensorFlow's masked CRC (crc32c.h `Mask`): rotate right by 15 bits, add 0xa282ead8. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
