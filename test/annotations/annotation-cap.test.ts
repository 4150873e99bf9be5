/**
 * A recording holds at most `MAX_ANNOTATIONS_A_RECORDING` annotations (100,000: what the viewer is built for),
 * so what one `GET` of its annotations reads is bounded. The recording is filled to just below the cap in the
 * database, then the API is asked for more: past the cap, 409 `conflict` naming the cap and the count, and
 * nothing written (no annotation, no revision moved).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { MAX_ANNOTATIONS_A_RECORDING } from '../../src/annotations/annotations.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { json } from '../datasets/support.js';
import { uploadedDataset } from './support.js';

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

describe('the annotations of one recording', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let recording: string;
  const q = () => `path=${encodeURIComponent(recording)}`;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { status: 'verified' });
    ({ id, recording } = await uploadedDataset(server, owner));
  });
  after(() => server.close());

  const held = async () => Number((await server.deps.db.selectFrom('annotations').select((eb) => eb.fn.countAll().as('n')).where('dataset_id', '=', id).where('path', '=', recording).executeTakeFirstOrThrow()).n);

  it(`are at most ${MAX_ANNOTATIONS_A_RECORDING}: past that a POST is refused with 409 and writes nothing`, async () => {
    assert.equal(MAX_ANNOTATIONS_A_RECORDING, 100_000);
    const { revision } = await json(await owner.api(`/datasets/${id}/annotations`, post({ path: recording, onset: 0, duration: 0, label: 'first' })), 201);
    // The rest up to 3 below the cap, written straight into the table (the API would take 10 requests).
    await sql`insert into annotations (id, dataset_id, path, onset, duration, label, created_at, updated_at)
      select 'filled-' || i, ${id}, ${recording}, 0, 0, 'filled', now(), now() from generate_series(1, ${MAX_ANNOTATIONS_A_RECORDING - 4}) i`.execute(server.deps.db);
    assert.equal(await held(), MAX_ANNOTATIONS_A_RECORDING - 3);

    const items = (n: number, label: string) => Array.from({ length: n }, () => ({ path: recording, onset: 0, duration: 0, label }));
    const refused = await json(await owner.api(`/datasets/${id}/annotations`, post(items(4, 'over'))), 409);
    assert.equal(refused.error, 'conflict');
    assert.match(refused.message, /at most 100000 annotations/);
    assert.match(refused.message, new RegExp(`has ${MAX_ANNOTATIONS_A_RECORDING - 3}\\b`));
    assert.deepEqual([refused.limit, refused.held], [MAX_ANNOTATIONS_A_RECORDING, MAX_ANNOTATIONS_A_RECORDING - 3]);
    assert.equal(await held(), MAX_ANNOTATIONS_A_RECORDING - 3, 'nothing written');
    const unchanged = await owner.api(`/datasets/${id}/annotations/history?${q()}&after=${revision}`);
    assert.deepEqual(await json(unchanged, 200), { changes: [], revision }, 'no revision taken, no change kept');

    // Up to the cap is taken; one more is not.
    await json(await owner.api(`/datasets/${id}/annotations`, post(items(3, 'last'))), 201);
    assert.equal(await held(), MAX_ANNOTATIONS_A_RECORDING);
    assert.equal((await json(await owner.api(`/datasets/${id}/annotations`, post({ path: recording, onset: 0, duration: 0, label: 'one more' })), 409)).error, 'conflict');
    assert.equal(await held(), MAX_ANNOTATIONS_A_RECORDING);
  });
});
