/**
 * Who may see a dataset (`src/datasets/dataset-access.ts`): each kind of caller gets its standing, and a caller who
 * may not read a private dataset learns nothing from the database's work either. Reading the caller's membership
 * only once the dataset was found made a private id cost one statement more than an unknown one: 0.4 to 0.8 ms at
 * the median, enough to tell private ids from unknown ones in a few hundred requests of a signed-in stranger.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CompiledQuery } from 'kysely';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { findDatasetAndStanding } from '../../src/datasets/dataset-access.js';
import { upsertMember } from '../../src/datasets/dataset-members-queries.js';

const PRIVATE = 'nd000777';
const PUBLIC = 'nd000779';
const UNKNOWN = 'nd000778';

describe('who may see a dataset', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let admin: TestAccount;
  let reader: TestAccount;
  let maintainer: TestAccount;
  const statements: string[] = [];

  before(async () => {
    server = await startTestServer();
    [owner, stranger, reader, maintainer] = await Promise.all([createAccount(server), createAccount(server), createAccount(server), createAccount(server)]);
    admin = await createAccount(server, { role: 'admin' });
    await insertDatasetRows(server.deps.db, [
      { id: PRIVATE, name: 'secret', owner_id: owner.user.id, visibility: 'private' },
      { id: PUBLIC, name: 'open', owner_id: owner.user.id, visibility: 'public' },
    ]);
    for (const [who, role] of [[reader, 'reader'], [maintainer, 'maintainer']] as const) {
      await upsertMember(server.deps.db, { datasetId: PRIVATE, userId: who.user.id, role, addedBy: owner.user.id }, server.clock.now());
    }
    // Every statement the server sends through its database handle.
    const executor = server.deps.db.getExecutor();
    const execute = executor.executeQuery.bind(executor);
    executor.executeQuery = ((query: CompiledQuery, ...rest: unknown[]) => {
      statements.push(query.sql);
      return (execute as (...a: unknown[]) => ReturnType<typeof execute>)(query, ...rest);
    }) as typeof executor.executeQuery;
  });
  after(() => server.close());

  it('gives each caller their standing, and none with no dataset for an unknown id or one of another shape', async () => {
    const standing = async (id: string, who: TestAccount | undefined) => {
      const found = await findDatasetAndStanding(server.deps.db, id, who?.user);
      return [found.dataset?.id ?? null, found.dataset?.owner_username ?? null, found.standing];
    };
    assert.deepEqual(await standing(PRIVATE, admin), [PRIVATE, owner.user.username, 'admin']);
    assert.deepEqual(await standing(PRIVATE, owner), [PRIVATE, owner.user.username, 'owner']);
    assert.deepEqual(await standing(PRIVATE, maintainer), [PRIVATE, owner.user.username, 'maintainer']);
    assert.deepEqual(await standing(PRIVATE, reader), [PRIVATE, owner.user.username, 'reader']);
    assert.deepEqual(await standing(PRIVATE, stranger), [PRIVATE, owner.user.username, 'none']);
    assert.deepEqual(await standing(PRIVATE, undefined), [PRIVATE, owner.user.username, 'none']);
    assert.deepEqual(await standing(PUBLIC, stranger), [PUBLIC, owner.user.username, 'public']);
    assert.deepEqual(await standing(PUBLIC, undefined), [PUBLIC, owner.user.username, 'public']);
    assert.deepEqual(await standing(PUBLIC, reader), [PUBLIC, owner.user.username, 'public']);
    for (const who of [stranger, admin, undefined]) {
      assert.deepEqual(await standing(UNKNOWN, who), [null, null, 'none']);
      assert.deepEqual(await standing('nd0007770', who), [null, null, 'none']);
    }
  });

  /** The statements about datasets and their members one request runs. */
  async function datasetStatements(request: (id: string) => Promise<Response>, id: string): Promise<string[]> {
    await (await request(id)).arrayBuffer(); // the key's look-up cached
    statements.length = 0;
    await (await request(id)).arrayBuffer();
    return statements.filter((s) => /\b(datasets|dataset_members)\b/.test(s));
  }

  const requests = (who: TestAccount | undefined) =>
    [
      ['MCP get_dataset', (id: string) => mcp(who, id)],
      ['GET /datasets/:id', (id: string) => call(who, `/datasets/${id}`)],
      ['GET /datasets/:id/annotations/labels', (id: string) => call(who, `/datasets/${id}/annotations/labels`)],
      ['GET /datasets/resolve/:sourceId', (id: string) => call(who, `/datasets/resolve/${id}`)],
      ['the dataset page', (id: string) => page(who, `/datasets/${id}`)],
      ['git info/refs', (id: string) => call(who, `/git/${id}.git/info/refs?service=git-upload-pack`)],
      // Members are listed to signed-in callers only.
      ...(who ? ([['GET /datasets/:id/members', (id: string) => call(who, `/datasets/${id}/members`)]] as const) : []),
    ] as const;
  /** A page as a browser asks for it: with the caller's session cookie. */
  const page = async (who: TestAccount | undefined, path: string) => {
    const headers = { accept: 'text/html' };
    return who ? (await createBrowserSession(server, who.user)).fetch(path, { headers }) : fetch(`${server.url}${path}`, { headers });
  };
  const call = (who: TestAccount | undefined, path: string) => (who ? who.api(path) : fetch(`${server.url}${path}`));
  const mcp = (who: TestAccount | undefined, id: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(who && { authorization: `Bearer ${who.key}` }) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_dataset', arguments: { dataset_id: id } } }),
    });

  for (const [caller, who] of [['a signed-in stranger', () => stranger], ['an anonymous caller', () => undefined]] as const) {
    it(`runs the same statements for ${caller} asking for a private id as for an unknown one`, async () => {
      for (const [name, request] of requests(who())) {
        const hidden = await datasetStatements(request, PRIVATE);
        const unknown = await datasetStatements(request, UNKNOWN);
        assert.ok(hidden.length > 0, `${name}: reads the dataset`);
        assert.deepEqual(hidden, unknown, `${name}: ${hidden.length} statements for the private id, ${unknown.length} for the unknown id`);
      }
    });
  }

  it('reads the membership in the statement that reads the dataset, so a member still reads a private dataset', async () => {
    const hidden = await datasetStatements((id) => call(stranger, `/datasets/${id}`), PRIVATE);
    assert.equal(hidden.length, 1, hidden.join('\n'));
    assert.match(hidden[0]!, /\bdatasets\b[\s\S]*\bdataset_members\b/);
    assert.equal((await reader.api(`/datasets/${PRIVATE}`)).status, 200);
    assert.equal((await stranger.api(`/datasets/${PRIVATE}`)).status, 404);
  });
});
