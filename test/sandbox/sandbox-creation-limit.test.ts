/**
 * Sandbox dataset ids are `sb` and six digits, from the sequence `sandbox_number`; `SANDBOX_DATASETS_MAX` (5)
 * bounds what an account holds at once, and `/sandbox/reset` frees them. So an account also makes at most
 * `SANDBOX_CREATIONS_PER_DAY` (20) in a day (`datasets/dataset-limits.ts`): past that, 429 with `Retry-After`,
 * and no number taken. A creation refused for another reason (the cap held) does not count.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { SANDBOX_CREATIONS_PER_DAY } from '../../src/datasets/dataset-limits.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const post = (body?: unknown): RequestInit => ({ method: 'POST', ...(body !== undefined && { body: JSON.stringify(body) }) });

describe('sandbox datasets made by one account', () => {
  let server: TestServer;
  let account: TestAccount;

  before(async () => {
    server = await startTestServer();
    account = await createAccount(server, { status: 'verified' });
  });
  after(() => server.close());

  const taken = async () => (await sql<{ n: string }>`select last_value::text as n from sandbox_number`.execute(server.deps.db)).rows[0]!.n;
  const create = (who: TestAccount, name: string) => who.api('/datasets', post({ name }));

  it(`are at most ${SANDBOX_CREATIONS_PER_DAY} a day, however many resets free them`, async () => {
    assert.equal(SANDBOX_CREATIONS_PER_DAY, 20);
    let made = 0;
    while (made < SANDBOX_CREATIONS_PER_DAY) {
      for (let i = 0; i < 5; i++, made++) assert.equal((await create(account, `churn ${made}`)).status, 201);
      if (made < SANDBOX_CREATIONS_PER_DAY) {
        // Refused for holding the most it may at once: not counted against the day's.
        const held = await create(account, 'a sixth');
        assert.equal(held.status, 409);
        assert.equal(((await held.json()) as { error: string }).error, 'too_many_sandbox_datasets');
      }
      assert.equal((await account.api('/sandbox/reset', post())).status, 200);
    }
    const before = await taken();
    const refused = await create(account, 'one more');
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as { error: string; message: string };
    assert.equal(body.error, 'rate_limited');
    assert.match(body.message, /made 20 sandbox datasets in a day/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 86_400, `Retry-After: ${retryAfter}`);
    assert.equal(await taken(), before, 'no sandbox number taken');

    // Another account is not held back; and the day over, this one makes datasets again.
    assert.equal((await create(await createAccount(server, { status: 'verified' }), 'my first dataset')).status, 201);
    server.clock.advance(retryAfter * 1000);
    assert.equal((await create(account, 'next day')).status, 201);
  });

  it('do not count for administrators', async () => {
    const admin = await createAccount(server, { role: 'admin' });
    for (let i = 0; i <= SANDBOX_CREATIONS_PER_DAY; i++) assert.equal((await admin.api('/datasets', post({ name: `a${i}`, sandbox: true }))).status, 201);
  });
});
