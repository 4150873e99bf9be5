/**
 * Where a store's objects go. Keys are relative to the store root (`zarr.json`, `eeg_500hz/0/c/0/3`); a sink
 * for the object store prefixes them with the store's location. `put` overwrites. A chunk's bytes (keys with
 * `/c/`) are the caller's again once the returned promise settles, since the writer reuses chunk buffers:
 * a sink that keeps them after that must copy them.
 */
export interface StoreSink {
  put(key: string, bytes: Uint8Array): Promise<void>;
}
