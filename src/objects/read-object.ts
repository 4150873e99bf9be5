/**
 * Reading an object whole, for the small documents nds keeps in the store (manifests, `index.json`, Zarr
 * metadata, objects the gateway caches). Large content is streamed instead; never call this on it.
 */
import type { Readable } from 'node:stream';
import type { ObjectStore } from './object-store.js';

/** Collects a body stream into one buffer (for a body already opened, after a size check say). */
export async function readBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The bytes of the object at `key`; `undefined` when there is none. */
export function readObject(store: Pick<ObjectStore, 'readAll'>, key: string): Promise<Buffer | undefined> {
  return store.readAll(key);
}
