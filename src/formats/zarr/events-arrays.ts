/**
 * The `events/` group: onset and duration (float64 s) and code (int32), with `label_map` from code to text,
 * and `events/table.json` (named by the group's `table` attribute): `columns`, every column of the BIDS
 * `_events.tsv` (values as written, `n/a` as null, in onset order) when the events came from one, and
 * `sample_index`, each event's sample at each group's rate (`round(onset × rate)`).
 */
import type { Annotation } from '../types.js';
import type { ChunkCodec } from './chunk-codec.js';
import type { StoreSink } from './store-sink.js';
import { arrayMetadata, groupMetadata, json } from './zarr-metadata.js';

export async function writeEvents(sink: StoreSink, codec: ChunkCodec, events: readonly Annotation[], groups: ReadonlyArray<{ name: string; rate: number }> = []): Promise<string[]> {
  const sorted = [...events].sort((a, b) => a.onset - b.onset);
  const labels: string[] = [];
  const codes = new Map<string, number>();
  const onset = new Float64Array(sorted.length);
  const duration = new Float64Array(sorted.length);
  const code = new Int32Array(sorted.length);
  sorted.forEach((event, i) => {
    let c = codes.get(event.description);
    if (c === undefined) {
      c = labels.length;
      codes.set(event.description, c);
      labels.push(event.description);
    }
    onset[i] = event.onset;
    duration[i] = event.duration;
    code[i] = c;
  });
  const n = sorted.length;
  const arrays = [
    ['onset', onset, 'float64'],
    ['duration', duration, 'float64'],
    ['code', code, 'int32'],
  ] as const;
  for (const [name, data, dataType] of arrays) {
    if (n > 0) await sink.put(`events/${name}/c/0`, await codec.encode(new Uint8Array(data.buffer)));
    await sink.put(
      `events/${name}/zarr.json`,
      arrayMetadata({ shape: [n], chunkShape: [Math.max(1, n)], dataType, codecs: codec.metadata, dimensionNames: ['event'] }),
    );
  }
  const labelMap = Object.fromEntries(labels.map((label, i) => [String(i), label]));
  // A set, not a search of the list: a wide events.tsv gives every event every column.
  const seen = new Set<string>();
  for (const event of sorted) for (const name of Object.keys(event.columns ?? {})) seen.add(name);
  const names = [...seen];
  const columns = Object.fromEntries(names.map((name) => [name, sorted.map((event) => event.columns?.[name] ?? null)]));
  const sampleIndex = Object.fromEntries(groups.map((g) => [g.name, sorted.map((event) => Math.round(event.onset * g.rate))]));
  // The table goes beside the group's metadata, not into it: pages embed events/zarr.json, and a long
  // _events.tsv would make every page of the recording heavier.
  if (n > 0) await sink.put('events/table.json', json({ ...(names.length > 0 ? { columns } : {}), sample_index: sampleIndex }));
  await sink.put('events/zarr.json', groupMetadata({ label_map: labelMap, n_events: n, ...(n > 0 ? { table: 'table.json', columns: names } : {}) }));
  return labels;
}
