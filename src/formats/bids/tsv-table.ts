/** BIDS TSV files: UTF-8, a header row, tab-separated, `n/a` for missing values. */

export interface TsvTable {
  columns: string[];
  rows: Record<string, string>[];
}

export function parseTsv(text: string): TsvTable {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).filter((line) => line.trim() !== '');
  const columns = (lines.shift() ?? '').split('\t').map((c) => c.trim());
  const rows = lines.map((line) => {
    const cells = line.split('\t');
    return Object.fromEntries(columns.map((c, i) => [c, (cells[i] ?? 'n/a').trim()]));
  });
  return { columns, rows };
}

/** A cell's value, or undefined for `n/a` and empty cells. */
export function cell(row: Record<string, string>, column: string): string | undefined {
  const value = row[column];
  return value === undefined || value === '' || value === 'n/a' ? undefined : value;
}
