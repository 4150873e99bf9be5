import { fileURLToPath } from 'node:url';
import type { Clock } from '../core/clock.js';
import type { ObjectStore } from './object-store.js';
import { objectUrlSigner, type SigningSettings } from './signing-secret.js';

export interface OpenObjectStoreOptions extends Partial<SigningSettings> {
  /** The nds server's own origin: the folder store's presigned URLs point at its `/objects/` routes. */
  publicUrl?: string;
  /** The folder store's presigned URLs expire by this clock (the process's `deps.clock`); default: real time. */
  clock?: Clock;
}

/**
 * Picks the object store from `OBJECT_STORE_URL`: `file:<folder>` or `s3://bucket?endpoint=...`.
 * The S3 implementation (and the AWS SDK) loads only when it is asked for.
 */
export async function openObjectStore(url: string, options: OpenObjectStoreOptions = {}): Promise<ObjectStore> {
  if (url.startsWith('file:')) {
    const { FileObjectStore } = await import('./file-object-store.js');
    const folder = url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length);
    const signer = options.dataDir !== undefined ? objectUrlSigner({ dataDir: options.dataDir, objectSigningSecret: options.objectSigningSecret }) : undefined;
    return new FileObjectStore(folder, { baseUrl: options.publicUrl, signer, clock: options.clock });
  }
  if (url.startsWith('s3://')) {
    const { S3ObjectStore } = await import('./s3-object-store.js');
    return S3ObjectStore.fromUrl(url);
  }
  throw new Error(`unsupported object store URL: ${url}`);
}
