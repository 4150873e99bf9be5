/** FileSource keeps the file's SHA-256 from the reads it serves; whatever the reads, the digest is sha256sum's. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileSource } from '../../../src/formats/readers/file-source.js';

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
