/**
 * Annotations as a BIDS `events.tsv` (decision 0028): onset, duration, trial_type (the label), channel (labels
 * joined by commas, `n/a` for all), HED and annotator. Byte-stable: rows sorted on their own text, numbers in
 * one fixed notation, so the same annotations give the same bytes whatever their ids, order or times. A pure
 * module: the export route and the commit both use it.
 */
import type { TsvTable } from '../formats/bids/tsv-table.js';

export const EXPORT_COLUMNS = ['onset', 'duration', 'trial_type', 'channel', 'HED', 'annotator'] as const;

/** The column a committed `_events.tsv` carries to tell its annotation rows from the rows it had: their ids. */
export const ANNOTATION_ID_COLUMN = 'nds_annotation';

export interface TsvAnnotation {
  id?: string;
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
  hed: string | null;
  author: string | null;
}

/** Seconds with up to 6 decimals (1 µs), no exponent, no trailing zeros: one spelling for one value. */
export function seconds(value: number): string {
  const fixed = value.toFixed(6).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
}

/**
 * A cell: tabs and line breaks would break the table, so they become spaces. Double quotes become single
 * ones: BIDS tables may quote cells, and readers that honour quotes (pandas, Python's csv) take a cell opening
 * with `"` to run to the next `"`, swallowing the rows after it. Empty is `n/a`.
 */
function cellText(value: string | null): string {
  if (value === null) return 'n/a';
  const text = value.replace(/[\t\r\n]+/g, ' ').replace(/"/g, "'").trim();
  return text === '' ? 'n/a' : text;
}

/** The export's cells of one annotation, in `EXPORT_COLUMNS` order. */
export function exportCells(a: TsvAnnotation): string[] {
  return [seconds(a.onset), seconds(a.duration), cellText(a.label), a.channels && a.channels.length ? cellText(a.channels.join(',')) : 'n/a', cellText(a.hed), cellText(a.author)];
}

function compareRows(a: string[], b: string[]): number {
  const byOnset = Number(a[0]) - Number(b[0]) || Number(a[1]) - Number(b[1]);
  if (byOnset !== 0) return byOnset;
  const x = a.join('\t');
  const y = b.join('\t');
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `GET /datasets/:id/annotations/export?format=tsv`: the header and a row each, by onset, ending in a newline. */
export function annotationsTsv(annotations: readonly TsvAnnotation[]): string {
  const rows = annotations.map(exportCells).sort(compareRows);
  return [EXPORT_COLUMNS.join('\t'), ...rows.map((r) => r.join('\t'))].join('\n') + '\n';
}

/**
 * A recording's `_events.tsv` with its annotations: the rows it had (`existing`, when there was a file) kept
 * as written, less the annotation rows an earlier commit wrote (known by `nds_annotation`), then a row per
 * annotation. Columns: the file's own, then those of the export it lacks, then `nds_annotation`.
 */
export function mergedEventsTsv(existing: TsvTable | undefined, annotations: readonly TsvAnnotation[]): string {
  const columns = [...(existing?.columns ?? [])];
  for (const c of [...EXPORT_COLUMNS, ANNOTATION_ID_COLUMN]) if (!columns.includes(c)) columns.push(c);
  const kept = (existing?.rows ?? []).filter((row) => (row[ANNOTATION_ID_COLUMN] ?? 'n/a') === 'n/a');
  const lines = kept.map((row) => columns.map((c) => row[c] ?? 'n/a'));
  const added = annotations
    .map((a) => {
      const cells = exportCells(a);
      const byName = new Map<string, string>(EXPORT_COLUMNS.map((c, i) => [c, cells[i]!]));
      byName.set(ANNOTATION_ID_COLUMN, a.id ?? 'n/a');
      return columns.map((c) => byName.get(c) ?? 'n/a');
    })
    .sort((a, b) => compareRows([a[columns.indexOf('onset')]!, a[columns.indexOf('duration')]!, ...a], [b[columns.indexOf('onset')]!, b[columns.indexOf('duration')]!, ...b]));
  return [columns.join('\t'), ...lines.map((r) => r.join('\t')), ...added.map((r) => r.join('\t'))].join('\n') + '\n';
}
