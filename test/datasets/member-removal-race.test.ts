/**
 * A member's access ends with the answer to their removal (docs/api.md, "Members"), also for the writes they
 * sent a moment before it: each asks the caller's right again under the dataset's row lock that member changes
 * take (`datasetForWhile`). Before, a write checked the right first and wrote later, outside anything the
 * removal waited on, so:
 * 1. a maintainer's PUT of their own role, sent as the owner removed them, passed its check before the DELETE
 *    and upserted the row after it: the removed maintainer was back, `added_by` themselves;
 * 2. a maintainer's version, sent as the owner removed them, was made after the removal had answered 204;
 * 3. likewise an annotator's annotations.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DeleteQueryNode, InsertQueryNode, TableNode, type KyselyPlugin } from 'kysely';
import { createAnnotations } from '../../src/annotations/annotations.js';
import { removeMember, setMember } from '../../src/datasets/dataset-members.js';
import { uploadedDataset } from '../annotations/support.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, ...(body !== undefined && { body: JSON.stringify(body) }) });
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('removing a maintainer while they write', () => {
  let server: TestServer;
  let owner: TestAccount;
  let n = 0;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
  });
  after(() => server.close());

  /** A private dataset of the owner with a new account as its maintainer. */
  async function sharedDataset(): Promise<{ id: string; mallory: TestAccount }> {
    const id = `nd${String(100 + n++).padStart(6, '0')}`;
    await insertDatasetRows(server.deps.db, { id, name: `race ${id}`, owner_id: owner.user.id, visibility: 'private' });
    const mallory = await createAccount(server);
    assert.equal((await owner.api(`/datasets/${id}/members/${mallory.user.username}`, send('PUT', { role: 'maintainer' }))).status, 201);
    return { id, mallory };
  }

  it('does not let a maintainer removed at the moment they re-assert their role come back', async () => {
    // Two requests handled at once, as two connections of a PostgreSQL pool handle them: the maintainer's PUT
    // of her own role and the owner's DELETE of her.
    const { id, mallory } = await sharedDataset();
    const deps = server.deps as Parameters<typeof setMember>[0];
    const [put, removal] = await Promise.allSettled([
      setMember(deps, { user: mallory.user, ip: '192.0.2.1' }, id, mallory.user.username, 'maintainer'),
      removeMember(deps, { user: owner.user, ip: '192.0.2.2' }, id, mallory.user.username),
    ]);
    assert.equal(removal.status, 'fulfilled', 'the owner was told she is removed');
    const row = await server.deps.db.selectFrom('dataset_members').selectAll().where('dataset_id', '=', id).where('user_id', '=', mallory.user.id).executeTakeFirst();
    const seen = (await mallory.api(`/datasets/${id}`)).status;
    assert.equal(
      row,
      undefined,
      `removed (the DELETE succeeded), yet a member again: role ${row?.role}, added_by ${row?.added_by === mallory.user.id ? 'herself' : row?.added_by}; her PUT ${put.status}; GET /datasets/${id} answers her ${seen}`,
    );
  });

  it('makes no version for a maintainer after their removal has answered 204', async () => {
    const late: string[] = [];
    for (let round = 0; round < 10; round++) {
      const { id, mallory } = await sharedDataset();
      // Mallory uploads 32 small files (what a version of a real dataset holds), then makes a version of them.
      const files = Array.from({ length: 32 }, (_, i) => Buffer.from(`file ${i} of ${id}\n`));
      const manifest = files.map((b, i) => ({ path: `sub-${String(i).padStart(2, '0')}/notes.txt`, size: b.length, sha256: createHash('sha256').update(b).digest('hex') }));
      const { files: targets } = (await (await mallory.api(`/datasets/${id}/upload-urls`, send('POST', { files: manifest }))).json()) as { files: Array<{ status: string; url: string; headers: Record<string, string> }> };
      for (const [i, t] of targets.entries()) {
        if (t.status === 'upload') assert.equal((await fetch(t.url, { method: 'PUT', headers: t.headers, body: new Uint8Array(files[i]!) })).status < 300, true);
      }

      const version = mallory.api(`/datasets/${id}/versions`, send('POST', { version: '1.0.0', manifest })).then((r) => r.status);
      await turns(round);
      const removed = (await owner.api(`/datasets/${id}/members/${mallory.user.username}`, send('DELETE'))).status;
      assert.equal(removed, 204);
      const existedAtRemoval = (await server.deps.db.selectFrom('dataset_versions').select('version').where('dataset_id', '=', id).execute()).length > 0;
      const made = await version;
      if (made === 201 && !existedAtRemoval) late.push(`round ${round}: DELETE answered 204 with no version yet; her POST /versions then answered 201`);
    }
    assert.deepEqual(late, [], `a removed maintainer's write landed after the removal answered:\n${late.join('\n')}`);
  });
  it("writes no annotator's annotations after their removal", async () => {
    const { id, recording } = await uploadedDataset(server, owner);
    const late: string[] = [];
    for (let round = 0; round < 6; round++) {
      const annotator = await createAccount(server);
      assert.equal((await owner.api(`/datasets/${id}/members/${annotator.user.username}`, send('PUT', { role: 'annotator' }))).status, 201);
      // The statements of both requests in the order they completed: an annotation written after the member's
      // row was deleted is a write the removal did not stop.
      const completed: string[] = [];
      const labels = new Map<unknown, string>();
      const recorder: KyselyPlugin = {
        transformQuery: (args) => {
          const node = args.node;
          if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'annotations') labels.set(args.queryId, 'annotation written');
          if (DeleteQueryNode.is(node) && TableNode.is(node.from.froms[0]!) && node.from.froms[0].table.identifier.name === 'dataset_members') labels.set(args.queryId, 'member removed');
          return node;
        },
        transformResult: async (args) => {
          const label = labels.get(args.queryId);
          if (label) completed.push(label);
          return args.result;
        },
      };
      const deps = { ...server.deps, db: server.deps.db.withPlugin(recorder) };
      const marking = createAnnotations(deps, annotator.user, id, recording, [{ onset: 0.1, duration: 0, label: `race-${round}` }], undefined).then(
        () => 'made',
        (err: Error) => err.message,
      );
      await turns(round);
      await removeMember(deps, { user: owner.user, ip: '192.0.2.2' }, id, annotator.user.username);
      const outcome = await marking;
      if (completed.indexOf('annotation written') > completed.indexOf('member removed')) late.push(`round ${round}: ${completed.join(', ')} (${outcome})`);
    }
    assert.deepEqual(late, [], `a removed annotator's annotations were written after the removal:\n${late.join('\n')}`);
  });
});
