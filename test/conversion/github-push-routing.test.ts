/**
 * GitHub pushes go to every dataset converting from the pushed repository: another account's dataset cannot
 * take them away, neither by naming the repository among its external ids nor by converting from it too.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const WEBHOOK_SECRET = 'push-routing-webhook-secret';

describe('GitHub pushes routed to datasets', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET, IN_PROCESS_WORKER: 'false' } });
  });
  after(() => server.close());

  it('a push converts the dataset whose source_repo is the repository, whatever another names among its external ids, and every dataset converting from it', async () => {
    const attacker = await createAccount(server);
    const victim = await createAccount(server);
    // The attacker's dataset is older (lower id) than the victim's, which names its GitHub repository.
    await insertDatasetRows(server.deps.db, [
      { id: 'nd000010', name: 'attacker', owner_id: attacker.user.id, visibility: 'private' },
      { id: 'nd000020', name: 'victim', owner_id: victim.user.id, visibility: 'public', source_repo: 'https://github.com/victim-lab/eeg-study' },
    ]);
    let pushes = 0;
    const push = async () => {
      pushes++;
      const body = JSON.stringify({
        ref: 'refs/heads/main',
        after: pushes.toString(16).padStart(40, 'a'),
        repository: { full_name: 'victim-lab/eeg-study', html_url: 'https://github.com/victim-lab/eeg-study', clone_url: 'https://github.com/victim-lab/eeg-study.git' },
        commits: [{ added: [`sub-0${pushes}/eeg/sub-0${pushes}_task-rest_eeg.edf`], modified: [], removed: [] }],
      });
      const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;
      const res = await fetch(`${server.url}/webhooks/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': signature, 'x-github-delivery': `audit-${process.pid}-${pushes}` },
        body,
      });
      assert.equal(res.status, 200);
      const answer = (await res.json()) as { dispatched: boolean; datasets?: number; dataset_ids?: string[] };
      // Which datasets convert: the jobs of this push (the answer names only public ones).
      const jobs = await server.deps.db.selectFrom('conversion_jobs').select('dataset_id').where('ref', '=', pushes.toString(16).padStart(40, 'a')).orderBy('dataset_id').execute();
      assert.equal(answer.datasets, jobs.length);
      return { ...answer, converted: jobs.map((j) => j.dataset_id) };
    };
    assert.deepEqual((await push()).converted, ['nd000020'], 'control: the push converts the victim\'s dataset');

    // The attacker names the victim's repository among the external ids of their own dataset.
    const patch = await attacker.api('/datasets/nd000010', { method: 'PATCH', body: JSON.stringify({ external_ids: ['github:victim-lab/eeg-study'] }) });
    assert.equal(patch.status, 200, await patch.text());
    const after = await push();
    assert.deepEqual(after.converted, ['nd000020'], `a signed push of victim-lab/eeg-study converts ${after.converted}`);

    // Another dataset converting from the same (public) repository gets the pushes too; the first keeps them.
    const copy = await attacker.api('/datasets/nd000010', { method: 'PATCH', body: JSON.stringify({ external_ids: [], source_repo: 'https://github.com/victim-lab/eeg-study.git' }) });
    assert.equal(copy.status, 200, await copy.text());
    const both = await push();
    assert.deepEqual(both.converted, ['nd000010', 'nd000020']);
    // The answer, which GitHub shows the repository's administrators, counts the private one and names only the public one.
    assert.equal(both.datasets, 2);
    assert.deepEqual(both.dataset_ids, ['nd000020']);
  });
});
