/** PutQueue: writes overlap up to the limit, failures surface, and each put's bytes are handed back once written. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PutQueue } from '../../../src/formats/zarr/put-queue.js';
import type { StoreSink } from '../../../src/formats/zarr/store-sink.js';

/** A sink whose writes finish when the test says so. */
class ManualSink implements StoreSink {
  readonly waiting: { key: string; finish: (err?: Error) => void }[] = [];
  put(key: string): Promise<void> {
    return new Promise((resolve, reject) => this.waiting.push({ key, finish: (err) => (err ? reject(err) : resolve()) }));
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PutQueue', () => {
  it('hands each put\'s bytes back only after its write settled, failed writes included', async () => {
    const sink = new ManualSink();
    const back: Uint8Array[] = [];
    const queue = new PutQueue(sink, 4, (bytes) => back.push(bytes));
    const a = new Uint8Array(1);
    const b = new Uint8Array(2);
    await queue.put('a/c/0', a);
    await queue.put('b/c/0', b);
    assert.deepEqual(back, [], 'nothing is handed back while the writes are in flight');
    sink.waiting[1]!.finish();
    await tick();
    assert.deepEqual(back, [b]);
    sink.waiting[0]!.finish(new Error('disk full'));
    await tick();
    assert.deepEqual(back, [b, a]);
    await assert.rejects(queue.drain(), /disk full/);
  });

  it('waits for a write to finish once `limit` writes are in flight', async () => {
    const sink = new ManualSink();
    const queue = new PutQueue(sink, 2);
    await queue.put('x/c/0', new Uint8Array(1));
    let third = false;
    const second = queue.put('x/c/1', new Uint8Array(1)).then(() => (third = true));
    await tick();
    assert.equal(third, false, 'the second put waits: two writes are in flight');
    sink.waiting[0]!.finish();
    await second;
    assert.equal(third, true);
    sink.waiting[1]!.finish();
    await queue.drain();
  });

  it('settles only once every write in flight has ended, a failed one among them, and throws nothing', async () => {
    const sink = new ManualSink();
    const queue = new PutQueue(sink, 8);
    for (let i = 0; i < 3; i++) await queue.put(`s/c/${i}`, new Uint8Array(1));
    let settled = false;
    const settling = queue.settle().then(() => (settled = true));
    sink.waiting[0]!.finish(new Error('disk full'));
    sink.waiting[2]!.finish();
    await tick();
    assert.equal(settled, false, 'one write is still in flight');
    sink.waiting[1]!.finish();
    await settling;
    assert.equal(settled, true);
    await assert.rejects(queue.drain(), /disk full/, 'the failure is still the queue\'s to report');
  });
});
