/**
 * `nds serve --demo`'s dataset, on a real server: public, converted (the EEG and the EMG, events included),
 * readable through the gateway by anyone, its viewer drawing traces in chromium; made only on an empty service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDemoDataset } from '../../src/demo/demo-dataset.js';
import type { ViewerState } from '../../src/web/viewer/signal-viewer.js';
import { sharedChromium } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('the demo dataset', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  it('is created public and converted on an empty service, with a viewer link', async () => {
    const demo = await createDemoDataset(server.deps, { timeoutMs: 300_000 });
    assert.ok(demo.created, demo.created ? '' : demo.reason);
    assert.equal(demo.viewerUrl, `${server.url}/datasets/${demo.id}?recording=sub-01%2Feeg%2Fsub-01_task-rest_eeg.zarr`);
    const dataset = await (await fetch(`${server.url}/datasets/${demo.id}`, { headers: { accept: 'application/json' } })).json();
    assert.deepEqual([dataset.visibility, dataset.zarr_status, dataset.zarr_store_count, dataset.latest_version], ['public', 'ready', 2, '1.0.0']);
    const index = await (await fetch(`${server.url}/zarrproxy/${demo.id}/zarr/index.json`, { headers: { origin: server.url } })).json();
    assert.deepEqual(index.failures, []);
    const eeg = index.stores.find((s: { zarr: string }) => s.zarr === 'sub-01/eeg/sub-01_task-rest_eeg.zarr');
    assert.deepEqual(eeg.groups.map((g: { n_channels: number; rate: number; duration_s: number }) => [g.n_channels, g.rate, g.duration_s]), [[64, 256, 600]]);
    assert.deepEqual([...eeg.trial_types].sort(), ['blink', 'eyes_closed', 'eyes_open']);
    const page = await fetch(demo.viewerUrl, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /id="nds-viewer"/);

    const browser = await sharedChromium();
    try {
      const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await tab.goto(demo.viewerUrl);
      await tab.waitForFunction(() => (window as unknown as { ndsViewer?: ViewerState }).ndsViewer?.tracesReady === true, undefined, { timeout: 60_000 });
      const state = await tab.evaluate(() => (window as unknown as { ndsViewer: ViewerState }).ndsViewer);
      assert.equal(state.recording, 'sub-01/eeg/sub-01_task-rest_eeg.zarr');
      assert.equal(state.rate, 256);
      assert.ok(state.channelCount > 0 && state.end > state.start);
    } finally {
      await browser.close();
    }
  });

  it('is not made again on a service that has datasets', async () => {
    const again = await createDemoDataset(server.deps);
    assert.equal(again.created, false);
  });
});
