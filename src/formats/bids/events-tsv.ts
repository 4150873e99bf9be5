/**
 * Events from `_events.tsv`: onset (s, REQUIRED; rows without a numeric onset are skipped), duration (`n/a`
 * → 0), and a description from `trial_type`, else `value`, else "n/a"; every column of the row is kept as
 * written (`columns`, `n/a` as null) for the store's events table. Returns undefined when the table has no
 * onset column, so the file's own markers are kept.
 */
import type { Annotation } from '../types.js';
import { cellAt, type TsvRows } from './tsv-table.js';

export function eventsFrom(table: TsvRows): Annotation[] | undefined {
  const at = (name: string) => table.columns.indexOf(name);
  const [onsetAt, durationAt, trialTypeAt, valueColumnAt] = [at('onset'), at('duration'), at('trial_type'), at('value')];
  if (onsetAt < 0) return undefined;
  const events: Annotation[] = [];
  for (const row of table.rows) {
    const onset = Number(cellAt(row, onsetAt));
    if (cellAt(row, onsetAt) === undefined || !Number.isFinite(onset)) continue;
    const duration = Number(cellAt(row, durationAt));
    events.push({
      onset,
      duration: Number.isFinite(duration) && duration >= 0 ? duration : 0,
      description: cellAt(row, trialTypeAt) ?? cellAt(row, valueColumnAt) ?? 'n/a',
      columns: Object.fromEntries(table.columns.map((name, i) => [name, cellAt(row, i) ?? null])),
    });
  }
  return events;
}
