import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedObject, entryCost, type CachedObject } from '../../src/gateway/gateway-cache.js';
import { MemoryCache } from '../../src/gateway/memory-cache.js';

function obj(size: number, tag = 'x'): CachedObject {
  return cachedObject(Buffer.alloc(size), `"${tag}"`, {});
}

describe('in-process gateway cache', () => {
  it('keeps total bytes under its bound, evicting the least recently used entry first', () => {
    const cost = entryCost('nd000001/zarr/a', obj(1000));
    const cache = new MemoryCache(cost * 3);
    cache.setLocal('nd000001', 'nd000001/zarr/a', obj(1000), 60_000);
    cache.setLocal('nd000001', 'nd000001/zarr/b', obj(1000), 60_000);
    cache.setLocal('nd000001', 'nd000001/zarr/c', obj(1000), 60_000);
    assert.ok(cache.getLocal('nd000001/zarr/a'), 'a is used, so b becomes the oldest');
    cache.setLocal('nd000001', 'nd000001/zarr/d', obj(1000), 60_000);
    assert.equal(cache.getLocal('nd000001/zarr/b'), undefined);
    for (const k of ['a', 'c', 'd']) assert.ok(cache.getLocal(`nd000001/zarr/${k}`), k);
    assert.ok(cache.bytes <= cost * 3);
  });

  it('refuses an entry larger than the whole cache, and keeps nothing with a bound of 0', () => {
    const cache = new MemoryCache(2000);
    cache.setLocal('nd000001', 'nd000001/zarr/big', obj(5000), 60_000);
    assert.equal(cache.size, 0);
    const none = new MemoryCache(0);
    none.setLocal('nd000001', 'nd000001/zarr/a', obj(1), 60_000);
    assert.equal(none.getLocal('nd000001/zarr/a'), undefined);
  });

  it('forgets an entry when its time to live is over', () => {
    let now = 1_000_000;
    const cache = new MemoryCache(1 << 20, () => now);
    cache.setLocal('nd000001', 'nd000001/zarr/index.json', obj(10), 60_000);
    now += 59_999;
    assert.ok(cache.getLocal('nd000001/zarr/index.json'));
    now += 1;
    assert.equal(cache.getLocal('nd000001/zarr/index.json'), undefined);
    assert.equal(cache.bytes, 0);
  });

  it('drops a dataset or single keys', () => {
    const cache = new MemoryCache(1 << 20);
    cache.setLocal('nd000001', 'nd000001/zarr/a', obj(10), 60_000);
    cache.setLocal('nd000001', 'nd000001/zarr/b', { kind: 'missing' }, 60_000);
    cache.setLocal('nd000002', 'nd000002/zarr/a', obj(10), 60_000);
    cache.dropKeysLocal(['nd000002/zarr/a']);
    assert.equal(cache.getLocal('nd000002/zarr/a'), undefined);
    cache.dropDatasetLocal('nd000001');
    assert.equal(cache.size, 0);
    assert.equal(cache.bytes, 0);
  });

  it('replaces an entry without counting its bytes twice', () => {
    const cache = new MemoryCache(1 << 20);
    cache.setLocal('nd000001', 'nd000001/zarr/a', obj(100), 60_000);
    const once = cache.bytes;
    cache.setLocal('nd000001', 'nd000001/zarr/a', obj(100, 'y'), 60_000);
    assert.equal(cache.bytes, once);
    assert.equal((cache.getLocal('nd000001/zarr/a') as CachedObject).etag, '"y"');
  });
});
