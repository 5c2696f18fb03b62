import { ClawGymError, ErrorCodes } from '../errors';

/** A command-line flag that must be a whole number of at least `min`; a usage error says what was given. */
export function wholeNumberFlag(flag: string, raw: string | number, min: number): number {
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min) throw new ClawGymError(ErrorCodes.USAGE, `${flag} must be a whole number${min ? ` of at least ${min}` : ''}, got ${JSON.stringify(String(raw))}`);
  return v;
}
