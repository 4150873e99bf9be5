/** The command list of a push, read before git starts: counted, bounded, and passed on byte for byte. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { PushCommandsRefused, takePushCommands } from '../../src/git/push-commands.js';

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
