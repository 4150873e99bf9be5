/**
 * Packs written byte by byte, as a hostile client would send them: small on the wire, huge once inflated. A
 * pack's entry declares its inflated size up front and git believes it: a blob of zeros deflates about a
 * thousand to one, and a delta's copy instructions may repeat its base without end (four bytes copy 16 MiB).
 * Also the request around a pack, and git's answer taken apart (report-status inside side-band-64k).
 */
import { createHash } from 'node:crypto';
import { constants, deflateRawSync, deflateSync } from 'node:zlib';

const BLOB = 3;
const OFS_DELTA = 6;

/** An entry's header: type and inflated size, 4 bits then 7 bits a byte. */
function entryHeader(type: number, size: number): Buffer {
  const bytes = [(type << 4) | (size % 16)];
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    bytes[bytes.length - 1]! |= 0x80;
    bytes.push(rest % 128);
  }
  return Buffer.from(bytes);
}

/** A delta's base and result sizes: 7 bits a byte, least significant first. */
function deltaSize(size: number): number[] {
  const bytes: number[] = [];
  do {
    bytes.push((size % 128) | (size >= 128 ? 0x80 : 0));
    size = Math.floor(size / 128);
  } while (size > 0);
  return bytes;
}

/** The distance back to a delta's base, in git's own encoding (each further byte adds one before shifting). */
function baseDistance(distance: number): Buffer {
  const bytes = [distance & 127];
  while ((distance >>= 7) > 0) bytes.unshift(128 | (--distance & 127));
  return Buffer.from(bytes);
}

/** The pack of `entries` (each its header and deflated data), with its header and SHA-1 trailer. */
function pack(entries: Buffer[]): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0);
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([header, ...entries]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/** Zeros, with `tag` at the end so that blobs of one size still differ. */
function zeros(size: number, tag: string): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write(tag, Math.max(0, size - tag.length));
  return bytes;
}

/** Zeros are deflated this many at a time, and the piece repeated. */
const ZEROS_PIECE = 16 * 1024 ** 2;

/**
 * A zlib stream of `size` zeros, made in a moment whatever its size: one piece of deflated zeros repeated (each
 * flushed whole, Z_FULL_FLUSH, so it refers to nothing before it), a last empty block, and the Adler-32 of `size`
 * zeros (its sum stays 1; the sum of sums is `size`).
 */
function deflatedZeros(size: number): Buffer {
  const full = { finishFlush: constants.Z_FULL_FLUSH };
  const piece = deflateRawSync(Buffer.alloc(ZEROS_PIECE), full);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(((size % 65521) * 65536 + 1) >>> 0);
  const pieces: Buffer[] = Array.from({ length: Math.floor(size / ZEROS_PIECE) }, () => piece);
  return Buffer.concat([Buffer.from([0x78, 0x9c]), ...pieces, deflateRawSync(Buffer.alloc(size % ZEROS_PIECE), full), Buffer.from([0x03, 0x00]), checksum]);
}

/** One blob of `size` bytes of zeros (about a thousandth of it on the wire). */
export function zeroBlobPack(size: number): Buffer {
  return pack([Buffer.concat([entryHeader(BLOB, size), deflatedZeros(size)])]);
}

/** `count` blobs of `size` bytes of zeros each, all different. */
export function zeroBlobsPack(count: number, size: number): Buffer {
  return pack(Array.from({ length: count }, (_, i) => Buffer.concat([entryHeader(BLOB, size), deflateSync(zeros(size, `#${i}`))])));
}

/** The most one copy instruction of a delta copies (its size in three bytes). */
const LONGEST_COPY = 0xffffff;

/**
 * A blob of 16 MiB of zeros and a delta of it whose copy instructions repeat it `copies` times: a result of
 * `copies` × 16 MiB described in four bytes a copy, a pack of a few kilobytes.
 */
export function deltaBombPack(copies: number): { pack: Buffer; resultBytes: number } {
  const base = Buffer.concat([entryHeader(BLOB, LONGEST_COPY), deflateSync(Buffer.alloc(LONGEST_COPY))]);
  const resultBytes = copies * LONGEST_COPY;
  // 0x80: copy; 0x70: three size bytes follow; no offset byte: from the base's start.
  const copy = [0xf0, 0xff, 0xff, 0xff];
  const delta = Buffer.from([...deltaSize(LONGEST_COPY), ...deltaSize(resultBytes), ...Array.from({ length: copies }, () => copy).flat()]);
  const entry = Buffer.concat([entryHeader(OFS_DELTA, delta.length), baseDistance(base.length), deflateSync(delta)]);
  return { pack: pack([base, entry]), resultBytes };
}

/** A pkt-line of git's protocol. */
export function pkt(line: string): Buffer {
  return Buffer.concat([Buffer.from((Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')), Buffer.from(line)]);
}

/** A receive-pack request body: one ref created at `commit`, then `pack` (objects the ref need not reach). */
export function receivePackBody(ref: string, commit: string, packBytes: Buffer): Buffer {
  return Buffer.concat([pkt(`${'0'.repeat(40)} ${commit} ${ref}\0report-status side-band-64k agent=nds-test\n`), Buffer.from('0000'), packBytes]);
}

/** What git answered a receive-pack request: its report (`unpack ok`, `ok <ref>`, `ng <ref> <why>`) and its messages. */
export function readReceivePackAnswer(answer: Buffer): { report: string[]; messages: string } {
  const report: string[] = [];
  let messages = '';
  const lines = (bytes: Buffer, each: (payload: Buffer) => void) => {
    for (let at = 0; at + 4 <= bytes.length; ) {
      const length = Number.parseInt(bytes.toString('latin1', at, at + 4), 16);
      if (!(length >= 4)) {
        at += 4;
        continue;
      }
      each(bytes.subarray(at + 4, at + length));
      at += length;
    }
  };
  let reportBytes = Buffer.alloc(0);
  lines(answer, (payload) => {
    if (payload[0] === 1) reportBytes = Buffer.concat([reportBytes, payload.subarray(1)]);
    else if (payload[0] === 2 || payload[0] === 3) messages += payload.subarray(1).toString('utf8');
  });
  lines(reportBytes, (payload) => report.push(payload.toString('utf8').trimEnd()));
  return { report, messages };
}
