/**
 * Reads one nds-zarr store (CONTRACT §4) through the gateway with zarrita: root and group metadata, events,
 * and single chunks of level 0 or a view level, decoded and kept in a small LRU.
 */
import * as zarr from 'zarrita';
import { LruCache } from './lru-cache.js';

export interface ChannelMeta {
  label: string;
  unit: string;
  type: string;
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

export interface EventMarker {
  onset: number;
  duration: number;
  label: string;
}

/** A decoded chunk: C-order data with its shape and strides. */
export interface DecodedChunk {
  data: ArrayLike<number>;
  shape: number[];
  stride: number[];
}

type AnyArray = zarr.Array<zarr.DataType, zarr.FetchStore>;

export class RecordingStore {
  readonly #root: zarr.Location<zarr.FetchStore>;
  readonly #arrays = new Map<string, Promise<AnyArray>>();
  readonly #chunks: LruCache<string, DecodedChunk>;
  readonly #pending = new Map<string, Promise<DecodedChunk>>();
  readonly attrs: Record<string, unknown>;

  private constructor(root: zarr.Location<zarr.FetchStore>, attrs: Record<string, unknown>, cacheChunks: number) {
    this.#root = root;
    this.attrs = attrs;
    this.#chunks = new LruCache(cacheChunks);
  }

  /** Opens `<base>/<zarrPath>` (base: the dataset's gateway URL ending in `/zarr`). */
  static async open(storeUrl: string, cacheChunks = 256): Promise<RecordingStore> {
    const root = zarr.root(new zarr.FetchStore(storeUrl));
    const group = await zarr.open.v3(root, { kind: 'group' });
    return new RecordingStore(root, group.attrs as Record<string, unknown>, cacheChunks);
  }

  /** Names of the store's signal groups, highest rate first (the root's `channel_groups`). */
  groupNames(): string[] {
    const groups = (this.attrs['channel_groups'] as Array<{ name: string }> | undefined) ?? [];
    return groups.map((g) => g.name);
  }

  async group(name: string): Promise<GroupMeta> {
    const group = await zarr.open.v3(this.#root.resolve(name), { kind: 'group' });
    const a = group.attrs as Record<string, any>;
    return {
      name,
      rate: Number(a.rate),
      nChannels: Number(a.n_channels),
      nSamples: Number(a.n_samples),
      chunkSamples: Number(a.chunk_samples),
      channels: (a.channels as any[]).map((c) => ({ label: String(c.label), unit: String(c.unit ?? ''), type: String(c.type ?? ''), scale: Number(c.scale), offset: Number(c.offset) })),
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
    const [onset, duration, code] = await Promise.all([read('onset'), read('duration'), read('code')]);
    const out: EventMarker[] = [];
    for (let i = 0; i < onset.length; i++) {
      out.push({ onset: Number(onset[i]), duration: Number(duration[i]), label: a.label_map?.[String(code[i])] ?? String(code[i]) });
    }
    return out;
  }
}

function chunkKey(group: string, level: number, channelChunk: number, timeChunk: number): string {
  return `${group}|${level}|${channelChunk}|${timeChunk}`;
}
