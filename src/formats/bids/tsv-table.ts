/** BIDS TSV files: UTF-8, a header row, tab-separated, `n/a` for missing values. */
import { UnsupportedFormatError } from '../conversion-errors.js';

export interface TsvTable {
  columns: string[];
  rows: Record<string, string>[];
}

/**
 * A table as the converter keeps it: each row its cells by column index, only as many as its line has (a missing
 * cell reads as `n/a`), so a table of many columns and short rows takes the room of its text, not rows x columns.
 */
export interface TsvRows {
  columns: string[];
  rows: string[][];
}

/** The most columns a sidecar table may have; BIDS tables have a few, a wide events.tsv some dozens. */
export const MAX_TSV_COLUMNS = 1_000;
/**
 * The most cells (rows x columns) a sidecar table may have, e.g. 200,000 events of five columns. Every event
 * keeps a value for every column and `events/table.json` writes them all, so a table of many columns and short
 * rows costs rows x columns whatever the size of its file; a million cells cost the converter about 300 MB.
 */
export const MAX_TSV_CELLS = 1_000_000;

/**
 * Every row as an object of every column (a short row padded with `n/a`), within the bounds of `parseTsvRows`
 * (`name` names the file in its refusal): a few kilobytes of short rows under many columns would otherwise
 * make millions of cells.
 */
export function parseTsv(text: string, name = 'The table'): TsvTable {
  const { columns, rows } = parseTsvRows(text, name);
  return { columns, rows: rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? 'n/a']))) };
}

/**
 * A sidecar table for a conversion, refused (`unsupported_format`, naming the file `name`) beyond
 * `MAX_TSV_COLUMNS` columns or `MAX_TSV_CELLS` cells. Lines are taken one at a time: a file of millions of
 * empty lines is not split into millions of strings first.
 */
export function parseTsvRows(text: string, name: string): TsvRows {
  let columns: string[] | undefined;
  const rows: string[][] = [];
  for (let start = text.charCodeAt(0) === 0xfeff ? 1 : 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end);
    start = end + 1;
    if (line.trim() === '') continue;
    if (!columns) {
      columns = line.split('\t', MAX_TSV_COLUMNS + 1).map((c) => c.trim());
      if (columns.length > MAX_TSV_COLUMNS) {
        throw new UnsupportedFormatError(`${name} has more than ${MAX_TSV_COLUMNS.toLocaleString('en')} columns, more than nds applies from a sidecar table.`);
      }
      continue;
    }
    if ((rows.length + 1) * columns.length > MAX_TSV_CELLS) {
      throw new UnsupportedFormatError(
        `${name} has ${columns.length.toLocaleString('en')} columns and more than ${rows.length.toLocaleString('en')} rows: over the ${MAX_TSV_CELLS.toLocaleString('en')} cells (rows x columns) nds applies from a sidecar table.`,
      );
    }
    rows.push(line.split('\t', columns.length).map((c) => c.trim()));
  }
  return { columns: columns ?? [''], rows };
}

/** A cell's value, or undefined for `n/a` and empty cells. */
export function cell(row: Record<string, string>, column: string): string | undefined {
  const value = row[column];
  return value === undefined || value === '' || value === 'n/a' ? undefined : value;
}

/** The value written in column `index` of a row (`n/a` when the row is short), undefined when there is no such column. */
export function valueAt(row: readonly string[], index: number): string | undefined {
  return index < 0 ? undefined : (row[index] ?? 'n/a');
}

/** A cell's value by column index, or undefined for `n/a`, empty and missing cells. */
export function cellAt(row: readonly string[], index: number): string | undefined {
  const value = row[index];
  return value === undefined || value === '' || value === 'n/a' ? undefined : value;
}
