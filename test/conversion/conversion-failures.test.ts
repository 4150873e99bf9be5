/**
 * Recordings that cannot be converted are visible to the people who can act on them: a truncated EDF and a
 * BrainVision recording with a 0-byte .eeg, converted by the real pipeline, leave `zarr_status: ready` with
 * `zarr_failure_count: 2`, and their codes and reason sentences reach the admin status, `nds admin zarr
 * status`, `nds datasets show` and the dataset page (for the owner of a private dataset too).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { conversionFailuresOf, FAILURE_ADVICE, readConversionFailures } from '../../src/formats/zarr/conversion-failures.js';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertRepoDataset, EMPTY_EEG, makeRepoWithFailures, TRUNCATED } from '../web/workspace-support.js';

const ID = 'nd000901';

describe('conversion failures a user can act on', () => {
  let server: TestServer;
  let admin: TestAccount;
  let owner: TestAccount;
  let repo: string;

  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    owner = await createAccount(server);
    repo = makeRepoWithFailures();
    await convertRepoDataset(server, admin, { id: ID, name: 'Partly broken', ownerId: owner.user.id, repo, visibility: 'private' });
  });
  after(async () => {
    await server?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('reads each failure with its code and reason from index.json', async () => {
    const failures = await readConversionFailures(server.deps, ID);
    assert.deepEqual(failures?.map((f) => [f.path, f.code]), [[TRUNCATED, 'corrupt_or_truncated'], [EMPTY_EEG, 'empty_recording']]);
    assert.match(failures![0]!.reason, /truncated/);
    assert.match(failures![1]!.reason, /empty \(0 bytes\)/);
    assert.equal(await readConversionFailures(server.deps, 'nd000999'), undefined, 'no copy, no failures list');
  });

  it('keeps odd entries of an outside index readable, and gives a reason when one is missing', () => {
    const failures = conversionFailuresOf({ failures: [{ path: 'a.edf', code: 'weird' }, { path: 7 }, null, { path: 'b.edf', zarr: 'b.zarr', code: 'not_continuous', reason: ' ' }] as never });
    assert.deepEqual(failures, [
      { path: 'a.edf', zarr: '', code: 'unknown', reason: FAILURE_ADVICE.unknown },
      { path: 'b.edf', zarr: 'b.zarr', code: 'not_continuous', reason: FAILURE_ADVICE.not_continuous },
    ]);
  });

  it('tells a copy with failures from a clean one in the dataset JSON: ready, with zarr_failure_count', async () => {
    const d = (await (await owner.api(`/datasets/${ID}`)).json()) as { zarr_status: string; zarr_store_count: number; zarr_failure_count: number };
    assert.equal(d.zarr_status, 'ready');
    assert.equal(d.zarr_store_count, 1);
    assert.equal(d.zarr_failure_count, 2);
  });

  it('lists failures with reasons in the admin status and in nds admin zarr status', async () => {
    const status = (await (await admin.api(`/admin/datasets/${ID}/zarr`)).json()) as { zarr_failure_count: number; failures: Array<{ path: string; reason: string }> };
    assert.equal(status.zarr_failure_count, 2);
    assert.deepEqual(status.failures.map((f) => f.path), [TRUNCATED, EMPTY_EEG]);
    const printed = await nds(['admin', 'zarr', 'status', ID], { NDS_API_URL: server.url, NDS_API_KEY: admin.key });
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /failed +2/);
    assert.match(printed.stdout, /2 recordings could not be converted/);
    assert.match(printed.stdout, new RegExp(`${TRUNCATED}  \\[corrupt_or_truncated\\]\\n +sub-02_task-rest_eeg\\.edf is truncated`));
    assert.match(printed.stdout, /The data file sub-03_task-rest_eeg\.eeg is empty \(0 bytes\)\./);
  });

  it('says in nds datasets show that recordings failed', async () => {
    const shown = await nds(['datasets', 'show', ID], { NDS_API_URL: server.url, NDS_API_KEY: owner.key });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /zarr_failure_count +2/);
    // With GET /datasets/:id/recordings each failure is printed with its reason; without it, the count and where to look.
    assert.match(shown.stdout, /2 recordings could not be converted:[\s\S]*is truncated|2 recording\(s\) could not be converted; the dataset page lists why/);
  });

  it('shows the reasons on the private dataset page to its owner, and the page to nobody else', async () => {
    const session = await createBrowserSession(server, owner.user);
    const page = await session.fetch(`/datasets/${ID}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'private, no-store');
    const text = await page.text();
    assert.match(text, /2 recordings could not be converted/);
    assert.match(text, /sub-02_task-rest_eeg\.edf is truncated: the header announces/);
    assert.match(text, /The data file sub-03_task-rest_eeg\.eeg is empty \(0 bytes\)\./);
    const stranger = await createAccount(server);
    const strangerSession = await createBrowserSession(server, stranger.user);
    assert.equal((await strangerSession.fetch(`/datasets/${ID}`, { headers: { accept: 'text/html' } })).status, 404);
  });
});
