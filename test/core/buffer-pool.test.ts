/** The pool behind chunk outputs: a buffer is lent to one borrower at a time, and comes back only once. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BufferPool } from '../../src/core/buffer-pool.js';

describe('BufferPool', () => {
  it('lends a buffer of at least the size asked, and lends a given-back one again', () => {
    const pool = new BufferPool();
    const a = pool.take(5000);
    assert.ok(a.length >= 5000);
    pool.give(a.subarray(0, 10));
    const b = pool.take(6000);
    assert.equal(b.buffer, a.buffer, 'the same memory serves the next chunk of that size class');
  });

  it('never lends one buffer twice, even when it is given back twice', () => {
    // A double release must not let two chunks share memory.
    const pool = new BufferPool();
    const a = pool.take(5000);
    pool.give(a);
    pool.give(a);
    const b = pool.take(5000);
    const c = pool.take(5000);
    assert.notEqual(b.buffer, c.buffer);
  });

  it('ignores arrays it did not lend', () => {
    const pool = new BufferPool();
    const foreign = new Uint8Array(8192);
    pool.give(foreign);
    assert.notEqual(pool.take(8192).buffer, foreign.buffer);
  });

  it('keeps at most `keep` free buffers of a size', () => {
    const pool = new BufferPool(2);
    const lent = [pool.take(100), pool.take(100), pool.take(100)];
    for (const a of lent) pool.give(a);
    const again = [pool.take(100), pool.take(100), pool.take(100)].map((a) => a.buffer);
    assert.equal(again.filter((b) => lent.some((a) => a.buffer === b)).length, 2);
  });
});
