/**
 * CSV as RFC 4180 has it: quoted fields may hold commas, doubled quotes and line breaks; CRLF or
 * LF; a UTF-8 BOM is dropped. A malformed record is reported with its line and column, and
 * reading goes on after it, so one bad row does not take the rows after it down.
 */

/**
 * One record, with the line it starts on (1-based, the header is line 1) and its row number
 * (the header is row 0; broken records count, as a spreadsheet would show them).
 */
export interface CsvRecord { line: number; row: number; cells: string[] }

/** Something wrong in the file: where, and what was expected. */
export interface CsvProblem {
  line: number;
  /** The record's row number (see {@link CsvRecord.row}). */
  row: number;
  /** 1-based field number in the record. */
  field?: number;
  message: string;
}

/** The records of a CSV file, and what could not be read. */
export interface CsvFile { records: CsvRecord[]; problems: CsvProblem[] }

/** Read every record of `text` (the first is the header). */
export function readCsv(text: string): CsvFile {
  const src = text.replace(/^\uFEFF/, '');
  const records: CsvRecord[] = [];
  const problems: CsvProblem[] = [];
  let i = 0;
  let line = 1;
  let row = -1;
  while (i < src.length) {
    const start = { i, line };
    const cells: string[] = [];
    let cell = '';
    let quotedAt: { line: number; field: number } | undefined;
    let quoted = false;
    let broken: CsvProblem | undefined;
    for (;;) {
      if (i >= src.length) {
        if (quoted) broken = { line: quotedAt!.line, row: row + 1, field: quotedAt!.field, message: 'a quoted field opened here is never closed: expected a closing " before the end of the file' };
        cells.push(cell);
        break;
      }
      const ch = src[i]!;
      if (quoted) {
        if (ch === '"' && src[i + 1] === '"') { cell += '"'; i += 2; continue; }
        if (ch === '"') {
          quoted = false; i++;
          const next = src[i];
          if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r' && !broken) {
            broken = { line, row: row + 1, field: cells.length + 1, message: `text after a closing quote: expected a comma or the end of the line, found ${JSON.stringify(next)}` };
          }
          continue;
        }
        if (ch === '\n') line++;
        cell += ch; i++;
        continue;
      }
      if (ch === '"' && cell === '') { quoted = true; quotedAt = { line, field: cells.length + 1 }; i++; continue; }
      if (ch === ',') { cells.push(cell); cell = ''; i++; continue; }
      if (ch === '\n' || ch === '\r') {
        i += ch === '\r' && src[i + 1] === '\n' ? 2 : 1;
        line++;
        cells.push(cell);
        break;
      }
      cell += ch; i++;
    }
    if (broken) {
      row++;
      problems.push(broken);
      if (quoted) {
        // Resume on the line after the unclosed quote: the rows below it are still read.
        i = start.i; line = start.line;
        while (line <= broken.line && i < src.length) { if (src[i] === '\n') line++; i++; }
      }
      continue;
    }
    if (cells.length > 1 || cells[0] !== '') records.push({ line: start.line, row: ++row, cells });
  }
  return { records, problems };
}

/** The rows of a CSV keyed by its header (rows that cannot be read are left out: see {@link readCsv}). */
export function parseCsvRecords(text: string): Record<string, string>[] {
  const [header, ...body] = readCsv(text).records;
  if (!header) return [];
  const keys = header.cells.map((h) => h.trim());
  return body.map((r) => Object.fromEntries(keys.map((k, i) => [k, r.cells[i] ?? ''])));
}
