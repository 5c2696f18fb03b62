/** Parse simple CSV (comma-separated, optional double quotes, first row is the header). */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = text.replace(/\r\n/g, '\n').trim().split('\n').filter((l) => l.length > 0).map(splitRow);
  const [header, ...body] = rows;
  if (!header) return [];
  return body.map((cells) => Object.fromEntries(header.map((h, i) => [h.trim(), (cells[i] ?? '').trim()])));
}

/** The cells of one CSV line (double quotes, doubled quotes inside). */
export function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; }
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { cells.push(cur); cur = ''; }
    else cur += ch;
  }
  cells.push(cur);
  return cells;
}
