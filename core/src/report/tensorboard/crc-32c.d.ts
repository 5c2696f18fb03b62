// crc-32 ships types for its CRC-32 entry only; its CRC-32C entry has the same shape.
declare module 'crc-32/crc32c' {
  /** CRC-32C (Castagnoli) of bytes, as a signed 32-bit integer. */
  export function buf(data: Uint8Array, seed?: number): number;
}
