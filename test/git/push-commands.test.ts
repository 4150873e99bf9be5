/** The command list of a push, read before git starts: counted, bounded, and passed on byte for byte. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { MAX_REF_NAME_BYTES, MAX_REF_NAME_PARTS, PushCommandsRefused, takePushCommands } from '../../src/git/push-commands.js';

const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;
const update = (i: number) => pkt(`${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/b${i}${i === 0 ? '\0report-status' : ''}\n`);
/** `bytes` sent `size` bytes at a time, as a socket would. */
const inPieces = (bytes: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));
const limits = { maxRefs: 3, maxBytes: 1024 };

describe('the command list of a push', () => {
  it('passes the whole body on byte for byte, however it arrives', async () => {
    const body = Buffer.concat([Buffer.from(`${pkt(`shallow ${'c'.repeat(40)}\n`)}${update(0)}${update(1)}${update(2)}0000`), Buffer.from('PACK'), randomBytes(5000)]);
    for (const size of [1, 7, 100, body.length]) assert.deepEqual(await buffer(await takePushCommands(inPieces(body, size), undefined, limits)), body, `pieces of ${size}`);
    assert.deepEqual(await buffer(await takePushCommands(Readable.from([gzipSync(body)]), 'gzip', limits)), body, 'gzip, decoded');
  });

  it('refuses more ref updates than the limit, shallow lines not counted', async () => {
    const four = Buffer.from(`${update(0)}${update(1)}${update(2)}${update(3)}0000PACK`);
    await assert.rejects(takePushCommands(inPieces(four, 10), undefined, limits), (err: Error) => err instanceof PushCommandsRefused && /at most 3 refs/.test(err.message));
    await assert.rejects(takePushCommands(Readable.from([gzipSync(four)]), 'GZIP', limits), PushCommandsRefused);
  });

  // git writes a new ref as a file in a folder a part: refs a thousand parts deep were a million folders (and
  // gigabytes of disk the quota did not see) from one small push.
  it('refuses a ref name of more parts or bytes than the bounds, capabilities not counted', async () => {
    const named = (ref: string, first = false) => pkt(`${'0'.repeat(40)} ${'a'.repeat(40)} ${ref}${first ? '\0report-status side-band-64k agent=git/2.39' : ''}\n`);
    const parts = (n: number) => ['refs', 'heads', ...Array.from({ length: n - 2 }, (_, i) => `p${i}`)].join('/');
    const deepest = parts(MAX_REF_NAME_PARTS);
    const body = Buffer.from(`${named(deepest, true)}${named('refs/heads/main')}0000PACK`);
    assert.deepEqual(await buffer(await takePushCommands(inPieces(body, 64), undefined, limits)), body, `${MAX_REF_NAME_PARTS} parts pass`);
    const longest = `refs/heads/${'x'.repeat(MAX_REF_NAME_BYTES - 'refs/heads/'.length)}`;
    assert.deepEqual(await buffer(await takePushCommands(Readable.from([Buffer.from(`${named(longest, true)}0000`)]), undefined, limits)), Buffer.from(`${named(longest, true)}0000`));
    for (const ref of [parts(MAX_REF_NAME_PARTS + 1), `${longest}y`, `refs/heads/r0/${'a/'.repeat(1000)}x`]) {
      for (const first of [true, false]) {
        const refused = Buffer.from(`${named('refs/heads/main', !first)}${named(ref, first)}0000PACK`);
        await assert.rejects(takePushCommands(inPieces(refused, 100), undefined, limits), (err: Error) => err instanceof PushCommandsRefused && /A ref name may take at most/.test(err.message), ref.slice(0, 40));
      }
    }
  });

  it('refuses a list that runs on without its flush', async () => {
    const endless = Buffer.from(Array.from({ length: 2000 }, () => pkt(`shallow ${'c'.repeat(40)}\n`)).join(''));
    await assert.rejects(takePushCommands(inPieces(endless, 512), undefined, { maxRefs: 3, maxBytes: 1024 }), /may take at most 1,024 bytes/);
  });

  it('fails on a body that is not the gzip it says it is', async () => {
    await assert.rejects(takePushCommands(Readable.from([Buffer.from(`${update(0)}0000`)]), 'gzip', limits), (err: Error) => !(err instanceof PushCommandsRefused));
  });

  it('passes a list git cannot read on as it is, for git to refuse', async () => {
    const garbage = Buffer.from('zzzz not a pkt-line at all');
    assert.deepEqual(await buffer(await takePushCommands(Readable.from([garbage]), undefined, limits)), garbage);
    assert.deepEqual(await buffer(await takePushCommands(Readable.from([]), undefined, limits)), Buffer.alloc(0));
  });
});
