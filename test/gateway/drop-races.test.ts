/**
 * A dataset made private on one gateway instance while another is reading one of its chunks from the store:
 * the reader must not cache what it read (where `answerNow` would serve it to anyone, without a visibility
 * check, for a day), neither in its own memory nor in the Redis tier every instance reads. Instances that
 * hear drops over the cluster's IPC channel, and instances that share Redis, where a fill may also land
 * between another instance's delete and its announcement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/core/log.js';
import { cachedObject, type CacheDrop, type GatewayCache } from '../../src/gateway/gateway-cache.js';
import { Gateway, type GatewayRequest } from '../../src/gateway/gateway.js';
import { RedisCache } from '../../src/gateway/redis-cache.js';
import { RelayedCache, type DropChannel } from '../../src/gateway/relayed-cache.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, STORE, withRedis } from './support.js';

const REDIS = 'redis://127.0.0.1:6379/7';

/** Stands in for the cluster's primary: what one worker sends, every other worker hears. */
function relay(n: number): DropChannel[] {
  const listeners: Array<(m: unknown) => void> = [];
  return Array.from({ length: n }, (_, i) => ({
    send: (m: CacheDrop) => listeners.forEach((l, j) => j !== i && l(JSON.parse(JSON.stringify(m)))),
    onMessage: (l) => void (listeners[i] = l),
  }));
}

const get = (target: string): GatewayRequest => ({ method: 'GET', target, header: () => undefined });
const chunkTarget = (id: string) => `/zarrproxy/${id}/zarr/${STORE}/eeg_250hz/0/c/0/0`;

/** The store, whose reads wait until `release()` once `hold()` was called; `reading` settles when one waits. */
function heldStore(real: ObjectStore): { store: ObjectStore; hold(): { reading: Promise<void>; release(): void } } {
  let gate: Promise<void> | undefined;
  let started: (() => void) | undefined;
  const store = new Proxy(real, {
    get(target, property) {
      if (property === 'get') {
        return async (...args: Parameters<ObjectStore['get']>) => {
          if (gate) {
            started?.();
            await gate;
          }
          return target.get(...args);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store,
    hold() {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      const reading = new Promise<void>((r) => (started = r));
      return {
        reading,
        release: () => {
          gate = undefined;
          release();
        },
      };
    },
  };
}

describe('gateway: a drop on one instance during another instance fill', () => {
  let server: TestServer;
  const closing: GatewayCache[] = [];
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    for (const cache of closing) await cache.close();
    await server.close();
  });

  /**
   * B starts a miss of a public dataset's chunk and its store read waits; A makes the dataset private and
   * drops it; B's read ends. Afterwards B answers a stranger as for an unknown dataset, and keeps nothing.
   */
  async function raceFillAgainstDrop(caches: [GatewayCache, GatewayCache]): Promise<{ id: string; chunk: Buffer }> {
    const id = newDatasetId();
    await insertDataset(server.deps.db, id, 'public');
    const { chunk } = await putZarrCopy(server.deps.objects, id);
    const held = heldStore(server.deps.objects);
    const a = new Gateway(server.deps, caches[0]);
    const b = new Gateway({ ...server.deps, objects: held.store }, caches[1]);

    const { reading, release } = held.hold();
    const fill = b.serve(get(chunkTarget(id)));
    await reading;
    // What `PATCH /datasets/:id {visibility: private}` does on instance A: the row, then the hook's drop.
    await server.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', id).execute();
    await a.dropDataset(id);
    release();
    const during = await fill;
    assert.equal(during.status, 200, 'the read that began while the dataset was public ends as it began');

    const unknown = await b.serve(get(chunkTarget(newDatasetId())));
    for (const [name, gateway] of [['B', b], ['A', a]] as const) {
      const later = await gateway.serve(get(chunkTarget(id)));
      assert.equal(later.status, 404, `${name} answers ${later.status} for the chunk of the dataset made private`);
      assert.deepEqual(later.body, unknown.body, `${name} answers as for an unknown dataset`);
      assert.equal(gateway.cache.getLocal(`${id}/zarr/${STORE}/eeg_250hz/0/c/0/0`), undefined, `${name} keeps nothing of it`);
    }
    return { id, chunk };
  }

  it('instances relayed over IPC: the reader keeps nothing of what it read', async () => {
    const [one, two] = relay(2);
    const caches: [GatewayCache, GatewayCache] = [new RelayedCache(1 << 20, one!), new RelayedCache(1 << 20, two!)];
    await raceFillAgainstDrop(caches);
  });

  it('instances sharing Redis: the reader keeps nothing, in memory or in Redis', async () => {
    const prefix = `nds:test-drop-race:${newDatasetId()}:`;
    const caches = [0, 1].map(() => new RedisCache({ url: REDIS, maxLocalBytes: 1 << 20, log: createLogger('silent'), prefix }));
    closing.push(...caches);
    await Promise.all(caches.map((c) => c.ready()));
    const { id } = await raceFillAgainstDrop(caches as [RedisCache, RedisCache]);
    assert.equal(await withRedis(REDIS, (r) => r.exists(`${prefix}o:${id}/zarr/${STORE}/eeg_250hz/0/c/0/0`)), 0, 'nothing of the dataset in Redis');
  });

  it('a fill written to Redis after another instance dropped the dataset is refused, however late it hears the drop', async () => {
    const prefix = `nds:test-drop-epoch:${newDatasetId()}:`;
    const [a, b, c] = [0, 1, 2].map(() => new RedisCache({ url: REDIS, maxLocalBytes: 1 << 20, log: createLogger('silent'), prefix }));
    closing.push(a!, b!, c!);
    await Promise.all([a!, b!, c!].map((x) => x.ready()));
    const id = newDatasetId();
    const key = `${id}/zarr/${STORE}/eeg_250hz/0/c/0/0`;
    const entry = cachedObject(Buffer.from('chunk'), '"e"', {});

    // B reads the epoch (before it asks whether the dataset is public) and fills after A's drop.
    const before = await b!.fillEpoch(id);
    assert.ok(before !== undefined, 'Redis answers the epoch');
    await a!.dropDataset(id);
    assert.equal(await b!.set(id, key, entry, 60_000, before), false, 'the fill is refused');
    assert.equal(await withRedis(REDIS, (r) => r.exists(`${prefix}o:${key}`)), 0, 'nothing in Redis');
    assert.equal(b!.getLocal(key), undefined, 'nor in the filler');
    assert.equal(await c!.getShared(key), undefined, 'nor for a third instance');

    // A fill with the epoch read after the drop is kept and shared; a key drop counts the dataset's epoch too.
    const now = await b!.fillEpoch(id);
    assert.notEqual(now, before);
    assert.equal(await b!.set(id, key, entry, 60_000, now), true);
    assert.ok(await c!.getShared(key), 'shared once no drop came between');
    await a!.dropKeys([key]);
    assert.equal(await b!.set(id, key, entry, 60_000, now), false, 'a fill from before a key drop is refused');

    // A fill whose epoch was never read (Redis was away) stays in its own process, and asks for a new one.
    const other = `${id}/zarr/${STORE}/eeg_250hz/0/c/0/1`;
    assert.equal(await b!.set(id, other, entry, 60_000), false);
    assert.ok(b!.getLocal(other));
    assert.equal(await withRedis(REDIS, (r) => r.exists(`${prefix}o:${other}`)), 0, 'not written to Redis without an epoch');

    // A drop of everything counts an epoch every dataset's fill carries, and keeps the epochs themselves.
    const beforeAll = await b!.fillEpoch(id);
    await a!.dropAll();
    assert.equal(await b!.set(id, key, entry, 60_000, beforeAll), false, 'a fill from before a drop of everything is refused');
    assert.notEqual(await withRedis(REDIS, (r) => r.get(`${prefix}e:${id}`)), null, 'the dataset epoch outlives the drop of everything');
  });
});
