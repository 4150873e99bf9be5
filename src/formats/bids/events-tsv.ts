/**
 * Events from `_events.tsv`: onset (s, REQUIRED; rows without a numeric onset are skipped), duration (`n/a`
 * → 0), and a description from `trial_type`, else `value`, else "n/a"; every column of the row is kept as
 * written (`columns`, `n/a` as null) for the store's events table. Returns undefined when the table has no
 * onset column, so the file's own markers are kept.
 */
import type { Annotation } from '../types.js';
import { cell, type TsvTable } from './tsv-table.js';

export function eventsFrom(table: TsvTable): Annotation[] | undefined {
  if (!table.columns.includes('onset')) return undefined;
  const events: Annotation[] = [];
  for (const row of table.rows) {
    const onset = Number(cell(row, 'onset'));
    if (cell(row, 'onset') === undefined || !Number.isFinite(onset)) continue;
    const duration = Number(cell(row, 'duration'));
    events.push({
      onset,
      duration: Number.isFinite(duration) && duration >= 0 ? duration : 0,
      description: cell(row, 'trial_type') ?? cell(row, 'value') ?? 'n/a',
      columns: Object.fromEntries(table.columns.map((name) => [name, cell(row, name) ?? null])),
    });
  }
  return events;
}
