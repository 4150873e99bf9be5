/** FileSource keeps the file's SHA-256 from the reads it serves; whatever the reads, the digest is sha256sum's. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileSource } from '../../../src/formats/readers/file-source.js';
import { SourceTree } from '../../../src/formats/source-tree.js';

const run = promisify(execFile);
let dir: string;
let path: string;
let expected: string;
const size = 3 * (1 << 20) + 12345;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-source-'));
  path = join(dir, 'data.bin');
  await writeFile(path, randomBytes(size));
  // The reference is the coreutils tool, not node:crypto over the same bytes.
  expected = (await run('sha256sum', [path])).stdout.split(' ')[0]!;
});
after(async () => rm(dir, { recursive: true, force: true }));

async function digestAfter(reads: (source: FileSource) => Promise<void>): Promise<string> {
  const source = await FileSource.open(path);
  try {
    await reads(source);
    return await source.sha256();
  } finally {
    await source.close();
  }
}

describe('FileSource.sha256', () => {
  it('equals sha256sum when nothing was read before', async () => {
    assert.equal(await digestAfter(async () => undefined), expected);
  });

  it('equals sha256sum after sequential reads into a reused buffer that the caller then overwrites', async () => {
    // The EDF reader reuses its batch buffers and BrainVision swaps big-endian bytes in place.
    const buffer = new Uint8Array(1 << 20);
    assert.equal(
      await digestAfter(async (source) => {
        for (let at = 0; at < size; at += 300_000) (await source.read(at, 300_000, buffer)).fill(0xaa);
      }),
      expected,
    );
  });

  it('equals sha256sum after overlapping, repeated, out-of-order and concurrent reads', async () => {
    assert.equal(
      await digestAfter(async (source) => {
        await source.read(0, 256);
        await source.read(0, 4096);
        await source.read(2_000_000, 1000);
        await source.read(100, 10_000);
        await Promise.all([source.read(10_100, 500_000), source.read(510_100, 500_000), source.read(size - 10, 100)]);
      }),
      expected,
    );
  });

  it('equals sha256sum of an empty file', async () => {
    const empty = join(dir, 'empty.bin');
    await writeFile(empty, new Uint8Array(0));
    const source = await FileSource.open(empty);
    assert.equal(await source.sha256(), (await run('sha256sum', [empty])).stdout.split(' ')[0]);
    await source.close();
  });

  it('does not read the file again when the reads covered it', async () => {
    const source = await FileSource.open(path);
    await source.read(0, size);
    await source.close();
    // The handle is closed: a second pass would fail, so the digest must come from the read above.
    assert.equal(await source.sha256(), expected);
  });
});

describe('FileSource reads stored content past the page cache', () => {
  const big = 9 * (1 << 20) + 777;
  let bytes: Buffer;
  let bigPath: string;
  let bigSha: string;
  /** `file` (of digest `sha`) in a tree that knows its digest, as a conversion's checkout knows that of content from the store. */
  const openStored = async (file: string, sha = bigSha) => FileSource.open(file, await SourceTree.at(join(file, '..'), new Map(), undefined, () => sha));
  before(async () => {
    bytes = randomBytes(big);
    bigSha = createHash('sha256').update(bytes).digest('hex');
    bigPath = join(dir, 'big.bin');
    await writeFile(bigPath, bytes);
  });

  const expectRead = async (source: FileSource, position: number, length: number, into?: Uint8Array) => {
    const got = await source.read(position, length, into);
    const want = bytes.subarray(position, Math.min(big, position + length));
    assert.equal(got.length, want.length, `length of ${length} at ${position}`);
    assert.ok(Buffer.from(got.buffer, got.byteOffset, got.length).equals(want), `bytes of ${length} at ${position}`);
  };

  it('gives the same bytes as the file for unaligned, whole-page, oversized and end-of-file reads', async () => {
    const source = await openStored(bigPath);
    try {
      // /tmp is ext4 on the machines nds is tested on, which takes O_DIRECT.
      assert.equal(source.readsPastCache, true);
      await expectRead(source, 0, 1 << 20);
      await expectRead(source, 4097, 300_001);
      await expectRead(source, 1 << 20, 4 << 20);
      await expectRead(source, 12_345, 4 << 20, new Uint8Array(5 << 20));
      // Larger than a direct read takes: read the ordinary way.
      await expectRead(source, 3, 6 << 20);
      // Across the end of the file, and wholly past it.
      await expectRead(source, big - 300_000, 1 << 20);
      await expectRead(source, big - 262_144, 262_144);
      await expectRead(source, big + 10, 1 << 20);
      // Small reads (headers) the ordinary way, between large ones.
      await expectRead(source, 100, 256);
      assert.equal(await source.sha256(), bigSha);
    } finally {
      await source.close();
    }
  });

  it('keeps every byte when more large reads run at once than there are aligned buffers', async () => {
    const sources = await Promise.all(Array.from({ length: 6 }, () => openStored(bigPath)));
    try {
      await Promise.all(sources.flatMap((source, s) => Array.from({ length: 5 }, (_, k) => expectRead(source, s * 65_537 + k * 1_700_001, 1_500_000))));
    } finally {
      await Promise.all(sources.map((source) => source.close()));
    }
  });

  it('gives the same bytes on tmpfs (which takes O_DIRECT since Linux 6.6, or refuses it before)', async (t) => {
    const shm = await mkdtemp('/dev/shm/nds-source-').catch(() => undefined);
    if (!shm) return t.skip('no /dev/shm on this machine');
    try {
      const onTmpfs = join(shm, 'big.bin');
      await writeFile(onTmpfs, bytes);
      const source = await openStored(onTmpfs);
      try {
        const got = await source.read(4097, 2_000_000);
        assert.ok(Buffer.from(got).equals(bytes.subarray(4097, 4097 + 2_000_000)));
      } finally {
        await source.close();
      }
    } finally {
      await rm(shm, { recursive: true, force: true });
    }
  });

  it('reads small files and files not from the store the ordinary way', async () => {
    const tiny = join(dir, 'tiny.bin');
    const tinyBytes = bytes.subarray(0, 100_000);
    await writeFile(tiny, tinyBytes);
    const source = await openStored(tiny, createHash('sha256').update(tinyBytes).digest('hex'));
    const unknown = await FileSource.open(bigPath);
    try {
      assert.equal(source.readsPastCache, false, 'a file under 256 KiB is read the ordinary way');
      assert.equal(unknown.readsPastCache, false, 'a file not from the store (no known digest) is read the ordinary way');
      await expectRead(unknown, 4097, 2_000_000);
    } finally {
      await source.close();
      await unknown.close();
    }
  });
});
