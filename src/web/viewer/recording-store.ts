/**
 * Reads one nds-zarr store (docs/conversion.md) through the gateway with zarrita: root and group metadata, events,
 * and single chunks of level 0 or a view level, decoded and kept in a small LRU. Metadata the page
 * embedded is answered from memory, so the first chunk requests go out without a metadata round trip.
 */
import * as zarr from 'zarrita';
import { LruCache } from './lru-cache.js';

export interface ChannelMeta {
  label: string;
  unit: string;
  type: string;
  /** `good`, `bad` or `n/a` (channels.tsv `status`). */
  status: string;
  scale: number;
  offset: number;
}

export interface GroupMeta {
  name: string;
  rate: number;
  nChannels: number;
  nSamples: number;
  chunkSamples: number;
  channels: ChannelMeta[];
  /** Number of view levels (levels 1..n). */
  viewLevels: number;
  downsample: number;
  viewChunkColumns: number;
}

import type { EventMarker } from '../../signals/event-marks.js';

export type { EventMarker };

/** A decoded chunk: C-order data with its shape and strides. */
export interface DecodedChunk {
  data: ArrayLike<number>;
  shape: number[];
  stride: number[];
}

type AnyArray = zarr.Array<zarr.DataType, zarr.Readable>;

/** Zarr metadata documents by key inside the store (`zarr.json`, `eeg_256hz/0/zarr.json`). */
export type EmbeddedMetadata = Record<string, unknown>;

/** A FetchStore that answers the embedded metadata keys itself. */
function storeWith(fetchStore: zarr.FetchStore, metadata: EmbeddedMetadata): zarr.AsyncReadable {
  const encoder = new TextEncoder();
  return {
    get(key: zarr.AbsolutePath, options?: RequestInit) {
      const doc = metadata[key.slice(1)];
      return doc === undefined ? fetchStore.get(key, options) : Promise.resolve(encoder.encode(JSON.stringify(doc)));
    },
    getRange: fetchStore.getRange.bind(fetchStore),
  };
}

// The stores' chunks are zstd (decision 0002): decoded by fzstd, which needs no `unsafe-eval` (decision 0022). Its
// own file, split from the entry like the other codecs, and loaded early by `warmCodecs`.
const zstd = () => import('./zstd-codec.js').then((m) => m.ZstdCodec as never);
zarr.registry.set('zstd', zstd);
zarr.registry.set('numcodecs.zstd', zstd);

/** An empty zstd frame: decoding it runs the decoder once before any data arrives. */
const emptyZstdFrame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00]);

/**
 * Loads the codecs named in the embedded metadata now, in parallel with the first chunk requests,
 * instead of when the first chunk is decoded.
 */
export function warmCodecs(metadata: EmbeddedMetadata): void {
  const names = new Set<string>();
  for (const doc of Object.values(metadata)) for (const c of (doc as { codecs?: Array<{ name: string }> }).codecs ?? []) names.add(c.name);
  for (const name of names) {
    const load = zarr.registry.get(name);
    if (!load) continue;
    void Promise.resolve(load())
      .then((Codec: any) => (name === 'zstd' ? Codec.fromConfig({ level: 0 }).decode(emptyZstdFrame) : undefined))
      .catch(() => undefined);
  }
}

export class RecordingStore {
  readonly #root: zarr.Location<zarr.Readable>;
  readonly #arrays = new Map<string, Promise<AnyArray>>();
  readonly #chunks: LruCache<string, DecodedChunk>;
  readonly #pending = new Map<string, Promise<DecodedChunk>>();
  readonly attrs: Record<string, unknown>;

  private constructor(root: zarr.Location<zarr.Readable>, attrs: Record<string, unknown>, cacheChunks: number) {
    this.#root = root;
    this.attrs = attrs;
    this.#chunks = new LruCache(cacheChunks);
  }

  /** Opens `<base>/<zarrPath>` (base: the dataset's gateway URL ending in `/zarr`). */
  static async open(storeUrl: string, options: { metadata?: EmbeddedMetadata; cacheChunks?: number; fetch?: (request: Request) => Promise<Response> } = {}): Promise<RecordingStore> {
    // `fetch`: a private dataset's reads carry a read grant (read-grant-fetch.ts).
    const fetchStore = new zarr.FetchStore(storeUrl, options.fetch ? { fetch: options.fetch } : undefined);
    const root = zarr.root<zarr.Readable>(options.metadata ? storeWith(fetchStore, options.metadata) : fetchStore);
    const group = await zarr.open.v3(root, { kind: 'group' });
    return new RecordingStore(root, group.attrs as Record<string, unknown>, options.cacheChunks ?? 256);
  }

  /** Names of the store's signal groups, highest rate first (the root's `channel_groups`). */
  groupNames(): string[] {
    const groups = (this.attrs['channel_groups'] as Array<{ name: string }> | undefined) ?? [];
    return groups.map((g) => g.name);
  }

  /** The group's metadata; its level-0 array metadata is requested alongside, not after it. */
  async group(name: string): Promise<GroupMeta> {
    this.level(name, 0).catch(() => undefined);
    const group = await zarr.open.v3(this.#root.resolve(name), { kind: 'group' });
    const a = group.attrs as Record<string, any>;
    return {
      name,
      rate: Number(a.rate),
      nChannels: Number(a.n_channels),
      nSamples: Number(a.n_samples),
      chunkSamples: Number(a.chunk_samples),
      channels: (a.channels as any[]).map((c) => ({ label: String(c.label), unit: String(c.unit ?? ''), type: String(c.type ?? ''), status: String(c.status ?? 'n/a'), scale: Number(c.scale), offset: Number(c.offset) })),
      viewLevels: Number(a.n_view_levels ?? 0),
      downsample: Number(a.view_downsample ?? 4),
      viewChunkColumns: Number(a.view_chunk_columns ?? 1024),
    };
  }

  /** Level 0 is `<group>/0`, view levels `<group>/view/<L>`; each array's metadata is read once. */
  level(group: string, level: number): Promise<AnyArray> {
    const path = level === 0 ? `${group}/0` : `${group}/view/${level}`;
    let array = this.#arrays.get(path);
    if (!array) {
      array = zarr.open.v3(this.#root.resolve(path), { kind: 'array' }) as Promise<AnyArray>;
      this.#arrays.set(path, array);
      array.catch(() => this.#arrays.delete(path));
    }
    return array;
  }

  /** The decoded chunk if it is already in memory. */
  cached(group: string, level: number, channelChunk: number, timeChunk: number): DecodedChunk | undefined {
    return this.#chunks.get(chunkKey(group, level, channelChunk, timeChunk));
  }

  /** Fetches and decodes one chunk (level 0: [channel, time]; views: [minmax, channel, time]). */
  chunk(group: string, level: number, channelChunk: number, timeChunk: number): Promise<DecodedChunk> {
    const key = chunkKey(group, level, channelChunk, timeChunk);
    const hit = this.#chunks.get(key);
    if (hit) return Promise.resolve(hit);
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.level(group, level)
        .then((array) => array.getChunk(level === 0 ? [channelChunk, timeChunk] : [0, channelChunk, timeChunk]))
        .then((c) => {
          const decoded = { data: c.data as ArrayLike<number>, shape: c.shape, stride: c.stride };
          this.#chunks.set(key, decoded);
          return decoded;
        })
        .finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return pending;
  }

  /** Event markers with labels from `label_map`; empty when the store has none. */
  async events(): Promise<EventMarker[]> {
    const group = await zarr.open.v3(this.#root.resolve('events'), { kind: 'group' }).catch(() => undefined);
    if (!group) return [];
    const a = group.attrs as { label_map?: Record<string, string>; n_events?: number };
    if (!a.n_events) return [];
    const read = async (name: string) => (await zarr.get(await zarr.open.v3(this.#root.resolve(`events/${name}`), { kind: 'array' }))).data as ArrayLike<number>;
    const [onset, duration, code, table] = await Promise.all([read('onset'), read('duration'), read('code'), this.#eventTable(group.attrs as { table?: unknown })]);
    const values = table?.columns?.['value'];
    const out: EventMarker[] = [];
    for (let i = 0; i < onset.length; i++) {
      const marker: EventMarker = { onset: Number(onset[i]), duration: Number(duration[i]), label: a.label_map?.[String(code[i])] ?? String(code[i]) };
      if (values) marker.value = values[i] === null || values[i] === undefined ? null : String(values[i]);
      out.push(marker);
    }
    return out;
  }

  /**
   * `events/table.json` (the events group's `table` attribute names it): every `_events.tsv` column, in the
   * arrays' onset order. Stores converted before it existed have no such attribute; a table that cannot be
   * read leaves the events as they were (label, onset, duration), not the viewer without events.
   */
  async #eventTable(attrs: { table?: unknown }): Promise<{ columns?: Record<string, unknown[]> } | undefined> {
    if (typeof attrs.table !== 'string') return undefined;
    try {
      const bytes = await this.#root.store.get(`/events/${attrs.table}`);
      return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as { columns?: Record<string, unknown[]> }) : undefined;
    } catch {
      return undefined;
    }
  }
}

function chunkKey(group: string, level: number, channelChunk: number, timeChunk: number): string {
  return `${group}|${level}|${channelChunk}|${timeChunk}`;
}
