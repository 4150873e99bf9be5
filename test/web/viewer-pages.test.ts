/** The dataset pages: server-rendered lists and details, privacy, and negotiation with the JSON API. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixturesDir } from '../formats/support/fixtures.js';
import { publishDataset } from './viewer-support.js';

const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const fixture = path.join(fixturesDir, 'mne-python/brainvision/test.vhdr');

describe('dataset pages', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    await publishDataset(server, { id: 'nd000801', ownerId: owner.user.id, name: 'Open <b>EEG</b>', recordings: [{ file: fixture, zarr: 'sub-01/eeg/sub-01_task-a_eeg.zarr' }] });
    await publishDataset(server, { id: 'nd000802', ownerId: owner.user.id, name: 'Hidden study', visibility: 'private', recordings: [] });
  });
  after(async () => server?.close());

  const get = (p: string, accept = browserAccept, cookie?: string) =>
    fetch(`${server.url}${p}`, { headers: { accept, ...(cookie ? { cookie } : {}) } });

  it('lists public datasets to everyone, and a signed-in owner\'s private ones to them only', async () => {
    const anonymous = await get('/datasets');
    assert.equal(anonymous.status, 200);
    assert.match(anonymous.headers.get('content-type')!, /^text\/html/);
    const text = await anonymous.text();
    assert.match(text, /href="\/datasets\/nd000801"/);
    assert.match(text, /Open &lt;b&gt;EEG&lt;\/b&gt;/, 'names are escaped');
    assert.doesNotMatch(text, /nd000802/);
    const own = await (await get('/datasets', browserAccept, (await createBrowserSession(server, owner.user)).cookie)).text();
    assert.match(own, /nd000802/);
    const other = await (await get('/datasets', browserAccept, (await createBrowserSession(server, stranger.user)).cookie)).text();
    assert.doesNotMatch(other, /nd000802/);
  });

  it('shows a dataset\'s recordings from index.json and the viewer wired to the gateway', async () => {
    const res = await get('/datasets/nd000801');
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /sub-01\/eeg\/sub-01_task-a_eeg/);
    assert.match(text, /<td>32<\/td><td>1000 Hz<\/td><td>7\.9 s<\/td><td>13<\/td>/);
    assert.match(text, /<script type="module" src="\/assets\/viewer\.js"><\/script>/);
    const config = JSON.parse(/<script type="application\/json" id="nds-viewer-config">(.*?)<\/script>/.exec(text)![1]!);
    const { metadata, annotations, ...rest } = config;
    // Annotations are read by whoever reads the dataset; an anonymous reader may not write them.
    assert.deepEqual({ ...annotations, labels: undefined }, { url: '/datasets/nd000801/annotations', annotate: false, maintain: false, labels: undefined });
    assert.ok(Array.isArray(annotations.labels));
    assert.doesNotMatch(text, /data-annotate/);
    assert.deepEqual(rest, { zarrBase: `${server.config.zarrCacheBaseUrl}/nd000801/zarr`, recordings: [{ zarr: 'sub-01/eeg/sub-01_task-a_eeg.zarr', path: 'sub-01/eeg/sub-01_task-a_eeg' }], selected: 'sub-01/eeg/sub-01_task-a_eeg.zarr', group: 'eeg_1000hz' });
    // The first frame's metadata is in the page, equal to what the gateway serves, so the viewer skips those requests.
    const keys = Object.keys(metadata).sort();
    assert.deepEqual(keys.filter((k) => !k.startsWith('eeg_1000hz/view/')), ['eeg_1000hz/0/zarr.json', 'eeg_1000hz/zarr.json', 'events/code/zarr.json', 'events/duration/zarr.json', 'events/onset/zarr.json', 'events/zarr.json', 'zarr.json']);
    const levels = (metadata['eeg_1000hz/zarr.json'] as { attributes: { n_view_levels: number } }).attributes.n_view_levels;
    assert.ok(levels >= 1);
    assert.equal(keys.filter((k) => k.startsWith('eeg_1000hz/view/')).length, levels);
    for (const key of ['zarr.json', 'eeg_1000hz/0/zarr.json', `eeg_1000hz/view/${levels}/zarr.json`]) {
      const served = await (await fetch(`${config.zarrBase}/sub-01/eeg/sub-01_task-a_eeg.zarr/${key}`)).json();
      assert.deepEqual(metadata[key], served, key);
    }
    // The script and the codec its arrays use are preloaded from the head.
    const head = text.slice(0, text.indexOf('</head>'));
    const preloads = [...head.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]!);
    assert.equal(preloads[0], '/assets/viewer.js');
    const codecs = new Set(JSON.stringify(metadata['eeg_1000hz/0/zarr.json']).match(/"name":"(zstd|blosc)"/g));
    assert.ok(preloads.length >= 1 + codecs.size, `a chunk per heavy codec: ${preloads}`);
    for (const href of preloads.slice(1)) {
      const res = await fetch(`${server.url}${href}`);
      assert.equal(res.status, 200, href);
      assert.match(res.headers.get('cache-control')!, /immutable/);
      await res.body?.cancel();
    }
  });

  it('answers 404 for a private dataset unless the owner asks', async () => {
    assert.equal((await get('/datasets/nd000802')).status, 404);
    assert.equal((await get('/datasets/nd000802', browserAccept, (await createBrowserSession(server, stranger.user)).cookie)).status, 404);
    assert.equal((await get('/datasets/nd000999')).status, 404);
    const own = await get('/datasets/nd000802', browserAccept, (await createBrowserSession(server, owner.user)).cookie);
    assert.equal(own.status, 200);
    assert.match(await own.text(), /Hidden study/);
  });

  it('leaves the JSON API to clients that accept JSON or anything', async () => {
    for (const accept of ['application/json', '*/*']) {
      for (const p of ['/datasets', '/datasets/nd000801']) {
        const res = await get(p, accept);
        assert.doesNotMatch(res.headers.get('content-type') ?? '', /text\/html/, `${p} with Accept ${accept}`);
        await res.body?.cancel();
      }
    }
    const api = await get('/datasets/nd000802', 'application/json');
    assert.notEqual(api.headers.get('content-type'), 'text/html; charset=UTF-8');
    await api.body?.cancel();
  });

  it('serves the viewer bundle with an ETag and answers 304 to a revalidation', async () => {
    const res = await fetch(`${server.url}/assets/viewer.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /javascript/);
    const code = await res.text();
    assert.match(code, /nds-viewer-config/);
    const again = await fetch(`${server.url}/assets/viewer.js`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    assert.equal(again.status, 304);
  });
});
