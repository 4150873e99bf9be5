/** SHA-256 of a file, streamed. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { FileReadError } from './conversion-errors.js';

export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  } catch (cause) {
    throw new FileReadError(`Reading ${path} failed: ${(cause as Error).message}.`, { cause });
  }
  return hash.digest('hex');
}
