/** How checks read the files an agent left: text (docx as its paragraphs), xlsx cells, CSV as a table. */
import type { Workspace } from '@clawgym/core';
import type ExcelJS from 'exceljs';
import { format as formatNumber, dateToSerial } from 'numfmt';
import { docxParagraphs, loadXlsx, plainCell, type CellValue } from '../office';

/** The text of a workspace file: a .docx's paragraphs one per line, anything else as UTF-8. */
export async function fileText(ws: Workspace, path: string): Promise<string> {
  const data = await ws.readFile(path);
  return path.toLowerCase().endsWith('.docx') ? (await docxParagraphs(data)).join('\n') : data.toString('utf8');
}

/** One cell as a check sees it. */
export interface CellReading {
  /** The value (a formula's saved result; dates as YYYY-MM-DD), undefined when empty. */
  value: CellValue | { formulaWithoutResult: string };
  /** Its number format code ("General" when none). */
  numFmt: string;
  /** The text a spreadsheet shows: the value under its number format. */
  formatted: string;
}

/** Read `sheet!cell` of a loaded workbook; a string saying what is missing when it cannot. */
export function readCell(wb: ExcelJS.Workbook, sheet: string | undefined, address: string): CellReading | string {
  const ws = sheet === undefined ? wb.worksheets[0] : wb.getWorksheet(sheet);
  if (!ws) return sheet === undefined ? 'the workbook has no sheets' : `no sheet named "${sheet}" (sheets: ${wb.worksheets.map((s) => s.name).join(', ') || 'none'})`;
  const cell = ws.getCell(address);
  const raw = cell.value;
  const numFmt = cell.numFmt || 'General';
  const value = plainCell(raw);
  let formatted: string;
  const shown = raw instanceof Date ? dateToSerial(raw) ?? raw : value;
  if (typeof shown === 'number') formatted = formatNumber(numFmt, shown);
  else if (typeof value === 'object') formatted = `=${value.formulaWithoutResult}`;
  else formatted = value === undefined ? '' : String(value);
  return { value, numFmt, formatted };
}

export { loadXlsx };

/** A CSV's cell as SQLite should hold it: a number when it reads as one, else the text. */
export function csvCell(s: string): string | number | null {
  const t = s.trim();
  if (t === '') return null;
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t) ? Number(t) : t;
}
