/**
 * Applies `_channels.tsv` to a file's channels: rows match by name, exactly first, then case-insensitively
 * when that is unambiguous. The row's type and status are taken. Its unit fills in a unit the file lacks;
 * a different unit is kept beside the file's as `bids_unit`, because the stored digital samples and
 * their scale belong to the file's unit (converting would break bit-exact physical values).
 */
import type { ChannelInfo } from '../types.js';
import type { ChannelDetails } from '../zarr/store-writer.js';
import { cell, type TsvTable } from './tsv-table.js';

const known = new Set(['name', 'type', 'units', 'status']);

export function channelDetailsFrom(table: TsvTable, channels: readonly ChannelInfo[]): { details: (ChannelDetails | undefined)[]; unmatched: number } {
  const exact = new Map<string, Record<string, string>[]>();
  const folded = new Map<string, Record<string, string>[]>();
  for (const row of table.rows) {
    const name = row['name'] ?? '';
    exact.set(name, [...(exact.get(name) ?? []), row]);
    folded.set(name.toLowerCase(), [...(folded.get(name.toLowerCase()) ?? []), row]);
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
    const key = rows[0]!['name'] ?? '';
    const k = used.get(key) ?? 0;
    used.set(key, k + 1);
    const row = rows[Math.min(k, rows.length - 1)]!;
    const extra: Record<string, unknown> = {};
    for (const column of table.columns) {
      const value = cell(row, column);
      if (!known.has(column) && value !== undefined) extra[column] = value;
    }
    return { type: cell(row, 'type')?.toUpperCase(), unit: cell(row, 'units'), status: cell(row, 'status'), extra };
  });
  return { details, unmatched };
}
