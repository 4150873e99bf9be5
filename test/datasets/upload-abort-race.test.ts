/**
 * A part PUT racing the abort (or completion) of its upload on the folder store leaves nothing behind and is
 * refused (404, never 500). Before, the store took a part whose folder was still there (the removal deletes
 * files before their folder), made the folder again and stored the part: every part URL of the aborted upload
 * then stored its bytes again, bytes no record named (the stale sweep never saw them) and no grant counted.
 * Now the removal renames the folder away in one step, and a part's folder is never made by a part.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sweepStaleUploads } from '../../src/datasets/multipart-uploads.js';
import type { TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';

const MIB = 1024 ** 2;
const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('a part sent while its upload is aborted (folder store)', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  before(async () => {
    server = await startTestServer({ env: { UPLOAD_PART_SIZE: String(5 * MIB), UPLOAD_PART_THRESHOLD: String(5 * MIB) } });
    owner = await createUploader(server);
    id = (await json(await owner.api('/datasets', post({ name: 'race' })), 201)).id;
  });
  after(async () => {
    await server?.close();
  });

  const put = (t: { url: string; headers: Record<string, string> }, body: Uint8Array) =>
    fetch(t.url, { method: 'PUT', headers: { ...t.headers, 'content-length': String(body.length) }, body: new Uint8Array(body) });
  const leftOf = async (upload: string) => {
    const left: string[] = [];
    for await (const o of server.deps.objects.list(`uploads/${id}/${upload}/`)) left.push(o.key);
    return left;
  };

  it('leaves nothing of an aborted upload behind and refuses (404) every part sent after the abort answered', async () => {
    // A file of 5 MiB + 1 byte: part 1 of 5 MiB, part 2 of one byte (cheap to send many times).
    const file = randomBytes(5 * MIB + 1);
    const partOf = (n: number) => file.subarray((n - 1) * 5 * MIB, n * 5 * MIB);
    const statuses = new Map<number, number>();
    let leftover: { upload: string; first: { url: string; headers: Record<string, string> } } | undefined;
    for (let attempt = 0; attempt < 40 && !leftover; attempt++) {
      const started = await json(await owner.api(`/datasets/${id}/multipart-uploads`, post({ path: `race-${attempt}.bin`, size: file.length })), 200);
      const [first, second] = (await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/part-urls`, post({ parts: [1, 2].map((n) => ({ part_number: n, sha256: sha(partOf(n)) })) })), 200)).parts;
      const aborted = owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`, { method: 'DELETE' });
      const sends: Promise<Response>[] = [];
      for (let i = 0; i < 30; i++) {
        sends.push(put(second, partOf(2)));
        await new Promise((resolve) => (i % 2 ? setImmediate(resolve) : setTimeout(resolve, 1)));
      }
      assert.equal((await aborted).status, 200);
      for (const res of await Promise.all(sends)) {
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        await res.arrayBuffer();
      }
      if ((await leftOf(started.upload_id)).length > 0) leftover = { upload: started.upload_id, first };
    }
    // A part sent while the abort runs is taken or refused as gone: never a server error.
    const serverErrors = statuses.get(500) ?? 0;
    if (!leftover) {
      assert.equal(serverErrors, 0, `part PUTs racing the abort answered ${JSON.stringify([...statuses])}`);
      return;
    }
    const { upload, first } = leftover;
    // The abort has answered: part 1 (5 MiB) of the aborted upload must be refused as the docs promise.
    const late = await put(first, partOf(1));
    const lateStatus = late.status;
    await late.arrayBuffer();
    const grants = await server.deps.db.selectFrom('storage_grants').select(['object_key', 'bytes']).where('dataset_id', '=', id).where('object_key', 'like', 'uploads/%').execute();
    server.clock.advance(server.config.uploadStaleAfterS * 1000 + 3600_000);
    await sweepStaleUploads(server.deps);
    const left = await leftOf(upload);
    assert.deepEqual(
      { serverErrors, lateStatus, left, grants },
      { serverErrors: 0, lateStatus: 404, left: [], grants: [] },
      `after the abort answered, a part PUT answered ${lateStatus}; the store still holds ${JSON.stringify(left)} for the aborted upload (no storage grant, past the stale sweep)`,
    );
  });
});
