import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodedChunks } from '../../src/recordings/decoded-chunks.js';

/** A decoder that counts its calls; each chunk is `samples` int16 values (2 bytes each). */
function decoder(samples = 8) {
  const calls: string[] = [];
  return { calls, decode: (key: string) => async () => (calls.push(key), new Int16Array(samples)) };
}

describe('DecodedChunks: decoded chunks kept between requests, bounded by bytes', () => {
  it('decodes a chunk once for every reader, concurrent ones included', async () => {
    const cache = new DecodedChunks();
    const { calls, decode } = decoder();
    const [a, b] = await Promise.all([cache.get('"v1"\0k', decode('k')), cache.get('"v1"\0k', decode('k'))]);
    assert.equal(a, b);
    await cache.get('"v1"\0k', decode('k'));
    assert.deepEqual(calls, ['k']);
    assert.equal(cache.bytes, 16);
  });

  it('reads a rewritten store anew: its chunks are keyed by the new entity tag', async () => {
    const cache = new DecodedChunks();
    const { calls, decode } = decoder();
    await cache.get('"v1"\0k', decode('v1'));
    await cache.get('"v2"\0k', decode('v2'));
    assert.deepEqual(calls, ['v1', 'v2']);
  });

  it('drops the least recently used chunks past its bound', async () => {
    const cache = new DecodedChunks(32); // two chunks of 16 bytes
    const { calls, decode } = decoder();
    await cache.get('a', decode('a'));
    await cache.get('b', decode('b'));
    await cache.get('a', decode('a')); // a is now the most recently used
    await cache.get('c', decode('c')); // b goes
    assert.equal(cache.bytes, 32);
    await cache.get('a', decode('a'));
    await cache.get('b', decode('b'));
    assert.deepEqual(calls, ['a', 'b', 'c', 'b']);
  });

  it('keeps no failed read: the next reader tries again', async () => {
    const cache = new DecodedChunks();
    await assert.rejects(cache.get('k', async () => Promise.reject(new Error('gone'))), /gone/);
    const { calls, decode } = decoder();
    await cache.get('k', decode('k'));
    assert.deepEqual(calls, ['k']);
  });
});
