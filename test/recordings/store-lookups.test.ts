import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Clock } from '../../src/core/clock.js';
import { LOOKUP_TTL_MS, StoreLookups } from '../../src/recordings/store-lookups.js';
import type { StoreMetadata } from '../../src/recordings/store-metadata.js';

/** A clock that moves only when told: real time passing between two calls never expires anything. */
class StoppedClock implements Clock {
  #ms = Date.parse('2026-11-27T12:00:00Z');
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

const store = (etag: string): StoreMetadata => ({ prefix: 'nd000001/zarr/sub-01_eeg/', etag, root: {}, groups: [] });

/** A catalogue that answers `current` and counts how often it was asked. */
function catalogue(current: StoreMetadata | undefined) {
  const asked = { n: 0, current };
  return { asked, lookUp: async () => (asked.n++, asked.current) };
}

describe('StoreLookups: which store a caller may read at a path, for a short while', () => {
  it('serves a found store without asking again until the clock passes its lifetime', async () => {
    const clock = new StoppedClock();
    const lookups = new StoreLookups(clock);
    const { asked, lookUp } = catalogue(store('"v1"'));
    assert.equal((await lookups.find('7', 'nd000001', 'a.edf', lookUp))?.etag, '"v1"');
    clock.advance(LOOKUP_TTL_MS - 1);
    assert.equal((await lookups.find('7', 'nd000001', 'a.edf', lookUp))?.etag, '"v1"');
    assert.equal(asked.n, 1);
    // The dataset changed meanwhile (made private: the catalogue finds nothing); seen once the lifetime is over.
    asked.current = undefined;
    clock.advance(1);
    assert.equal(await lookups.find('7', 'nd000001', 'a.edf', lookUp), undefined);
    assert.equal(asked.n, 2);
  });

  it('never remembers a refusal: the next request asks again', async () => {
    const lookups = new StoreLookups(new StoppedClock());
    const { asked, lookUp } = catalogue(undefined);
    await lookups.find('', 'nd000001', 'a.edf', lookUp);
    asked.current = store('"v1"');
    assert.equal((await lookups.find('', 'nd000001', 'a.edf', lookUp))?.etag, '"v1"');
    assert.equal(asked.n, 2);
  });

  it('keeps readers apart: what one caller may read says nothing of another', async () => {
    const lookups = new StoreLookups(new StoppedClock());
    await lookups.find('7', 'nd000001', 'a.edf', catalogue(store('"v1"')).lookUp);
    const stranger = catalogue(undefined);
    assert.equal(await lookups.find('8', 'nd000001', 'a.edf', stranger.lookUp), undefined);
    assert.equal(await lookups.find('grant:x', 'nd000001', 'a.edf', stranger.lookUp), undefined);
    assert.equal(stranger.asked.n, 2);
  });

  it('sees a dataset converted anew, made private or deleted at once when told (forgetDataset), and only that dataset', async () => {
    const lookups = new StoreLookups(new StoppedClock());
    const converted = catalogue(store('"v1"'));
    const other = catalogue(store('"w1"'));
    await lookups.find('7', 'nd000001', 'a.edf', converted.lookUp);
    await lookups.find('7', 'nd000002', 'a.edf', other.lookUp);
    converted.asked.current = store('"v2"'); // a new index.json, a rewritten store
    lookups.forgetDataset('nd000001');
    assert.equal((await lookups.find('7', 'nd000001', 'a.edf', converted.lookUp))?.etag, '"v2"');
    await lookups.find('7', 'nd000002', 'a.edf', other.lookUp);
    assert.equal(other.asked.n, 1);
  });

  it('does not remember a look-up that ran while a dataset was forgotten (its answer may be stale)', async () => {
    const lookups = new StoreLookups(new StoppedClock());
    const { asked, lookUp } = catalogue(store('"v1"'));
    await lookups.find('7', 'nd000001', 'a.edf', async () => {
      lookups.forgetDataset('nd000001');
      return lookUp();
    });
    await lookups.find('7', 'nd000001', 'a.edf', lookUp);
    assert.equal(asked.n, 2);
  });

  it('holds at most maxEntries look-ups, dropping the expired and then the oldest', async () => {
    const clock = new StoppedClock();
    const lookups = new StoreLookups(clock, { maxEntries: 3 });
    for (const path of ['a', 'b', 'c']) await lookups.find('7', 'nd000001', path, catalogue(store(path)).lookUp);
    await lookups.find('7', 'nd000001', 'd', catalogue(store('d')).lookUp);
    assert.ok(lookups.size <= 3);
    const d = catalogue(store('d'));
    await lookups.find('7', 'nd000001', 'd', d.lookUp);
    assert.equal(d.asked.n, 0, 'the newest look-up is kept');
  });
});
