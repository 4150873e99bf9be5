/** The CLI's part URLs asked for in batches (decision 0037): one request for the parts read meanwhile, each URL once. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PARTS_PER_REQUEST, PartUrlBatches, type PartChecksumField } from '../../src/cli/part-url-batches.js';

const sum = (n: number): { sha256: string } => ({ sha256: n.toString(16).padStart(64, '0') });

/** A server of part URLs that records each request's part numbers; `failNext` fails the next request. */
function fakeServer() {
  const requests: number[][] = [];
  let failNext = false;
  const fetch = async (parts: Array<{ part_number: number } & PartChecksumField>) => {
    requests.push(parts.map((p) => p.part_number));
    if (failNext) {
      failNext = false;
      throw new Error('connection reset');
    }
    return parts.map((p) => ({ part_number: p.part_number, url: `https://store/part/${p.part_number}/${'sha256' in p ? p.sha256 : p.crc32}`, headers: {} }));
  };
  return { requests, fetch, failNext: () => (failNext = true) };
}

describe('PartUrlBatches', () => {
  it('asks once for the part wanted and every part read since, each bound to its own checksum', async () => {
    const server = fakeServer();
    const batches = new PartUrlBatches(server.fetch);
    batches.known(1, sum(1));
    assert.equal((await batches.urlFor(1)).url, `https://store/part/1/${sum(1).sha256}`);
    for (const n of [2, 3, 4, 5]) batches.known(n, sum(n));
    const got = await Promise.all([3, 2, 5, 4].map((n) => batches.urlFor(n)));
    assert.deepEqual(got.map((t) => t.url), [3, 2, 5, 4].map((n) => `https://store/part/${n}/${sum(n).sha256}`));
    assert.deepEqual(server.requests, [[1], [3, 2, 4, 5]]);
  });

  it('hands a URL out once: a part sent again asks afresh', async () => {
    const server = fakeServer();
    const batches = new PartUrlBatches(server.fetch);
    batches.known(7, sum(7));
    await batches.urlFor(7);
    await batches.urlFor(7);
    assert.deepEqual(server.requests, [[7], [7]]);
  });

  it('asks anew for the parts of a request that failed, the failure told to the part that asked', async () => {
    const server = fakeServer();
    const batches = new PartUrlBatches(server.fetch);
    for (const n of [1, 2, 3]) batches.known(n, sum(n));
    server.failNext();
    await assert.rejects(batches.urlFor(1), /connection reset/);
    assert.equal((await batches.urlFor(2)).part_number, 2);
    assert.deepEqual(server.requests, [[1, 2, 3], [2, 3]]);
    assert.equal((await batches.urlFor(3)).part_number, 3);
    assert.equal(server.requests.length, 2);
  });

  it(`names at most ${MAX_PARTS_PER_REQUEST} parts a request`, async () => {
    const server = fakeServer();
    const batches = new PartUrlBatches(server.fetch);
    for (let n = 1; n <= 250; n++) batches.known(n, sum(n));
    await Promise.all(Array.from({ length: 250 }, (_, i) => batches.urlFor(i + 1)));
    assert.deepEqual(server.requests.map((r) => r.length), [100, 100, 50]);
    assert.deepEqual(server.requests.flat().sort((a, b) => a - b), Array.from({ length: 250 }, (_, i) => i + 1));
  });
});
