/**
 * The command list at the head of a push: `git-receive-pack`'s request is pkt-lines, one a ref to update, then a
 * flush, then the pack. It is read here before git starts: git holds every command in memory and writes a file
 * for each ref it creates, and `receive.maxInputSize` counts the pack only, so a list of a million branches
 * would cost the server what its few megabytes do not say.
 */
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** A push whose command list is past the limits; nothing of it reached git. */
export class PushCommandsRefused extends Error {}

export interface PushCommandLimits {
  /** The most ref updates one push may name. */
  maxRefs: number;
  /** The most bytes the list may take before its flush. */
  maxBytes: number;
}

/** `<old> <new> <ref>`: an update (SHA-1 or SHA-256 ids), as opposed to `shallow` lines and a push certificate. */
const UPDATE = /^[0-9a-f]{40,64} [0-9a-f]{40,64} /;
/**
 * The longest ref name a push may create, and its most `/`-separated parts: git writes a new ref as a file in a
 * folder a part, so a thousand refs a thousand parts deep were a million folders from one small push.
 */
export const MAX_REF_NAME_BYTES = 255;
export const MAX_REF_NAME_PARTS = 10;

/**
 * Reads the command list of `body` (gzip-encoded when `encoding` says so) and counts its ref updates; throws
 * `PushCommandsRefused` past `limits`. Returns the whole body again, decoded, for git. A list git could not
 * read is passed on as it is: git refuses it in its own words.
 */
export async function takePushCommands(body: Readable, encoding: string | undefined, limits: PushCommandLimits): Promise<Readable> {
  const source = encoding?.toLowerCase() === 'gzip' ? body.pipe(createGunzip()) : body;
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let head = Buffer.alloc(0);
  let offset = 0;
  let updates = 0;
  let listEnded = false;
  while (!listEnded) {
    const next = await chunks.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value]);
    while (offset + 4 <= head.length) {
      const hex = head.toString('latin1', offset, offset + 4);
      const length = /^[0-9a-f]{4}$/.test(hex) ? Number.parseInt(hex, 16) : -1;
      if (length < 4) {
        // The flush that ends the list, or something git will refuse itself.
        listEnded = true;
        break;
      }
      if (offset + length > head.length) break;
      const line = head.toString('latin1', offset + 4, offset + length);
      const update = UPDATE.exec(line);
      if (update) {
        updates++;
        // The name runs to the capabilities (after a NUL, on the first line) or the line's end.
        const name = line.slice(update[0].length).split(/[\0\n]/, 1)[0]!;
        if (Buffer.byteLength(name, 'latin1') > MAX_REF_NAME_BYTES || name.split('/').length > MAX_REF_NAME_PARTS) {
          throw new PushCommandsRefused(`A ref name may take at most ${MAX_REF_NAME_BYTES} bytes in at most ${MAX_REF_NAME_PARTS} parts separated by /; ${name.slice(0, 80)}${name.length > 80 ? '…' : ''} does not.`);
        }
      }
      if (updates > limits.maxRefs) throw new PushCommandsRefused(`A push may update at most ${limits.maxRefs.toLocaleString('en')} refs (MAX_GIT_PUSH_REFS); this one names more.`);
      offset += length;
    }
    if (!listEnded && head.length > limits.maxBytes + 0x10000) throw new PushCommandsRefused(`The list of refs a push updates may take at most ${limits.maxBytes.toLocaleString('en')} bytes; this one takes more.`);
  }
  const taken = head;
  return Readable.from(
    (async function* () {
      if (taken.length > 0) yield taken;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })(),
  );
}
