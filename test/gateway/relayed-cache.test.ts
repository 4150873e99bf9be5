/** Workers of `nds gateway` without Redis: a drop on one worker's cache reaches the others through the relay. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedObject, type CacheDrop } from '../../src/gateway/gateway-cache.js';
import { RelayedCache, type DropChannel } from '../../src/gateway/relayed-cache.js';

/** Stands in for the cluster's primary: what one worker sends, every other worker hears. */
function relay(n: number): DropChannel[] {
  const listeners: Array<(m: unknown) => void> = [];
  return Array.from({ length: n }, (_, i) => ({
    // A copy, as over IPC: no worker holds another's objects.
    send: (m: CacheDrop) => listeners.forEach((l, j) => j !== i && l(JSON.parse(JSON.stringify(m)))),
    onMessage: (l) => void (listeners[i] = l),
  }));
}

const A = 'nd000001/zarr/s.zarr/zarr.json';
const B = 'nd000001/zarr/s.zarr/c/0';
const C = 'nd000002/zarr/index.json';

function filled(channel: DropChannel): RelayedCache {
  const cache = new RelayedCache(1 << 20, channel);
  for (const key of [A, B, C]) void cache.set(key.slice(0, 8), key, cachedObject(Buffer.from(key), '"e"', {}), 60_000);
  return cache;
}

describe('relayed cache of gateway workers', () => {
  it('drops keys, prefixes, datasets and everything on every worker', async () => {
    const [c1, c2, c3] = relay(3).map(filled);
    const dropped: Array<string | undefined> = [];
    c3!.onDropHeard((id) => dropped.push(id));
    await c1!.dropKeys([A]);
    for (const c of [c1, c2, c3]) assert.equal(c!.getLocal(A), undefined);
    await c2!.dropPrefixes(['nd000001/zarr/s.zarr/c/']);
    for (const c of [c1, c2, c3]) assert.equal(c!.getLocal(B), undefined);
    assert.ok(c3!.getLocal(C));
    await c1!.dropDataset('nd000002');
    for (const c of [c1, c2, c3]) assert.equal(c!.getLocal(C), undefined);
    // Every drop heard is told (a fill under way then keeps nothing), with its dataset when it names one (whose
    // visibility answer goes too).
    assert.deepEqual(dropped, [undefined, undefined, 'nd000002']);
    for (const c of [c1, c2, c3]) await c!.set('nd000003', 'nd000003/zarr/x', { kind: 'missing' }, 60_000);
    await c3!.dropAll();
    for (const c of [c1, c2, c3]) assert.equal(c!.getLocal('nd000003/zarr/x'), undefined);
  });

  it('keeps what a worker caches to itself: a set is not announced', async () => {
    const [c1, c2] = relay(2).map((ch) => new RelayedCache(1 << 20, ch));
    await c1!.set('nd000001', A, cachedObject(Buffer.from('x'), '"e"', {}), 60_000);
    assert.ok(c1!.getLocal(A));
    assert.equal(c2!.getLocal(A), undefined);
  });

  it('ignores malformed messages', () => {
    const channels = relay(2);
    const cache = filled(channels[0]!);
    for (const m of [null, 'text', { keys: 'nd000001' }, { prefixes: [3] }, { everything: 'yes' }]) channels[1]!.send(m as unknown as CacheDrop);
    for (const key of [A, B, C]) assert.ok(cache.getLocal(key), key);
  });
});
