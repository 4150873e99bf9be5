/**
 * Collecting a stream of a small object into one buffer: the S3 store's `readAll`, and bodies the gateway
 * caches. Large content is streamed instead; never call this on it.
 */
import type { Readable } from 'node:stream';

/** Collects a body stream into one buffer (for a body already opened, after a size check say). */
export async function readBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
