/**
 * Declarative deterministic checks: what a task's final workspace must hold, written as data
 * (a JobBench folder's CHECKS.json, or any suite's task definition) and graded without a judge.
 */
import { z } from '@clawgym/core';

const path = z.string().min(1).describe('a path relative to the workspace');
const common = { id: z.string().min(1).optional(), description: z.string().optional() };
const cellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One check. `type` picks the kind; every kind names the workspace file it looks at. */
export const CheckSchema = z.discriminatedUnion('type', [
  z.strictObject({ ...common, type: z.literal('file_exists'), path }),
  z.strictObject({ ...common, type: z.literal('file_absent'), path }),
  z.strictObject({
    ...common, type: z.literal('contains'), path, text: z.string().min(1),
    /** Compare ignoring case (default false). Whitespace runs always compare as one space. */
    ignoreCase: z.boolean().optional(),
  }),
  z.strictObject({ ...common, type: z.literal('not_contains'), path, text: z.string().min(1), ignoreCase: z.boolean().optional() }),
  z.strictObject({
    ...common, type: z.literal('xlsx_cell'), path,
    /** Sheet name (default: the first sheet). */
    sheet: z.string().min(1).optional(),
    cell: z.string().regex(/^[A-Z]{1,3}[1-9]\d*$/, 'an A1-style address such as B2'),
    /** The cell's value (a formula's saved result); null for an empty cell. */
    equals: cellValue.optional(),
    /** Absolute tolerance when `equals` is a number (default 1e-9). */
    tolerance: z.number().min(0).optional(),
    /** The text the cell shows under its number format, e.g. "$1,234.50" or "12.5%". */
    formatted: z.string().optional(),
    /** The cell's number format code itself, e.g. "#,##0.00". */
    numFmt: z.string().optional(),
  }).refine((c) => c.equals !== undefined || c.formatted !== undefined || c.numFmt !== undefined, 'give at least one of equals, formatted, numFmt'),
  z.strictObject({
    ...common, type: z.literal('file_equals'), path,
    /** The reference file, relative to the task's reference folder (never shown to the agent). */
    reference: z.string().min(1),
    /** "bytes" (default), or "text": line endings and trailing whitespace ignored. */
    mode: z.enum(['bytes', 'text']).optional(),
  }),
  z.strictObject({
    ...common, type: z.literal('csv_query'), path,
    /** SQL over the CSV loaded as the table `data` (numbers stored as numbers). */
    query: z.string().min(1),
    equals: z.array(z.array(cellValue)),
    tolerance: z.number().min(0).optional(),
  }),
  z.strictObject({
    ...common, type: z.literal('sqlite_query'), path,
    query: z.string().min(1),
    equals: z.array(z.array(cellValue)),
    tolerance: z.number().min(0).optional(),
  }),
]);

/** One declarative check (see {@link CheckSchema}). */
export type Check = z.infer<typeof CheckSchema>;

/** A CHECKS.json: a list of checks, or `{ "checks": [...] }`. */
export const ChecksFileSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && !Array.isArray(v) && 'checks' in v ? (v as { checks: unknown }).checks : v),
  z.array(CheckSchema).min(1, 'expected at least one check'),
);
