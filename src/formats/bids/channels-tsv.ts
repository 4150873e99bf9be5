/**
 * Applies `_channels.tsv` to a file's channels: rows match by name, exactly first, then case-insensitively
 * when that is unambiguous. The row's type and status are taken. Its unit fills in a unit the file lacks;
 * a different unit is kept beside the file's as `bids_unit`, because the stored digital samples and
 * their scale belong to the file's unit (converting would break bit-exact physical values).
 */
import type { ChannelInfo } from '../types.js';
import type { ChannelDetails } from '../zarr/store-writer.js';
import { cellAt, valueAt, type TsvRows } from './tsv-table.js';

const known = new Set(['name', 'type', 'units', 'status']);

export function channelDetailsFrom(table: TsvRows, channels: readonly ChannelInfo[]): { details: (ChannelDetails | undefined)[]; unmatched: number } {
  const at = (name: string) => table.columns.indexOf(name);
  const [nameAt, typeAt, unitsAt, statusAt] = [at('name'), at('type'), at('units'), at('status')];
  const exact = new Map<string, string[][]>();
  const folded = new Map<string, string[][]>();
  const add = (map: Map<string, string[][]>, key: string, row: string[]) => {
    const rows = map.get(key);
    if (rows) rows.push(row);
    else map.set(key, [row]);
  };
  for (const row of table.rows) {
    const name = valueAt(row, nameAt) ?? '';
    add(exact, name, row);
    add(folded, name.toLowerCase(), row);
  }
  const used = new Map<string, number>();
  let unmatched = 0;
  const details = channels.map((channel) => {
    // Repeated labels (duplicate_channel_labels.edf) take repeated rows in order.
    const rows = exact.get(channel.label) ?? (folded.get(channel.label.toLowerCase())?.length === 1 ? folded.get(channel.label.toLowerCase()) : undefined);
    if (!rows) {
      unmatched++;
      return undefined;
    }
    const key = valueAt(rows[0]!, nameAt) ?? '';
    const k = used.get(key) ?? 0;
    used.set(key, k + 1);
    const row = rows[Math.min(k, rows.length - 1)]!;
    const extra: Record<string, unknown> = {};
    for (const [i, column] of table.columns.entries()) {
      const value = cellAt(row, i);
      if (!known.has(column) && value !== undefined) extra[column] = value;
    }
    return { type: cellAt(row, typeAt)?.toUpperCase(), unit: cellAt(row, unitsAt), status: cellAt(row, statusAt), extra };
  });
  return { details, unmatched };
}
