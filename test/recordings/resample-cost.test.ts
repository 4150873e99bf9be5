/**
 * What one resampled window may cost (docs/api.md, "Signal windows"): the filter's work, channels × output
 * samples × taps ÷ `up`, is bounded by `MAX_RESAMPLE_WORK` (refused with 400 naming the limit), and what is
 * under it runs a slice at a time, so an anonymous `rate=` request never holds the event loop for long.
 * On the demo's public recording: 64 channels, 10 minutes at 256 Hz.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { createDemoDataset } from '../../src/demo/demo-dataset.js';
import { MAX_RESAMPLE_WORK } from '../../src/recordings/signal-window.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('a resampled signal window', () => {
  let server: TestServer;
  let id: string;
  const path = 'sub-01/eeg/sub-01_task-rest_eeg.edf';

  before(async () => {
    server = await startTestServer();
    const demo = await createDemoDataset(server.deps, { timeoutMs: 120_000 });
    assert.ok(demo.created, JSON.stringify(demo));
    id = demo.id;
  });
  after(() => server.close());

  async function timed(query: string) {
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    const res = await fetch(`${server.url}/datasets/${id}/signal?path=${encodeURIComponent(path)}&format=f32&${query}`);
    const body = res.ok ? await res.arrayBuffer() : await res.text();
    h.disable();
    return { status: res.status, body, blockMs: h.max / 1e6, shape: res.headers.get('x-nds-shape'), channels: res.headers.get('x-nds-channels') };
  }

  it(`is refused past ${MAX_RESAMPLE_WORK} multiply-adds of its filter, with the limit named`, async () => {
    assert.equal(MAX_RESAMPLE_WORK, 200_000_000);
    // 64 channels × 76,800 samples at 128 Hz × 81 taps: 3.98 × 10^8 (its 9.8 × 10^6 values are within their limit).
    const whole = await timed('start=0&duration=600&rate=128');
    assert.equal(whole.status, 400);
    const body = JSON.parse(whole.body as string) as { error: string; message: string; details: string[] };
    assert.equal(body.error, 'validation_failed');
    assert.match(body.message, /takes 398131200 multiply-adds .*at most 200000000/);
    assert.match(body.details[0]!, /split the window in time/);
    // A minute of it, what a model reads at a time, is answered.
    const minute = await timed('start=0&duration=60&rate=128');
    assert.equal(minute.status, 200);
    assert.equal(minute.shape, '64,7680');
  });

  it('under the limit, gives other requests the event loop while it filters', async () => {
    // 16 channels (one row block, resampled together) for 5 minutes, from 256 Hz to 511.488 Hz (999/500: a
    // 40,001-tap filter, 40 multiply-adds an output): 16 × 153,446 × 40.04 ≈ 9.8 × 10^7, within the limit, and
    // most of a second of filtering in one run. The chunks are read (and kept) and the filter made beforehand,
    // so what is measured is the filtering: in slices, no turn of the event loop waits long.
    const all = (await timed('start=0&duration=1')).channels!.split(',');
    const channels = `channels=${all.slice(0, 16).join(',')}`;
    assert.equal((await timed(`start=0&duration=300&${channels}`)).status, 200);
    assert.equal((await timed(`start=0&duration=1&rate=511.488&${channels}`)).status, 200);
    const upsampled = await timed(`start=0&duration=300&rate=511.488&${channels}`);
    assert.equal(upsampled.status, 200, String(upsampled.body));
    assert.equal(upsampled.shape, '16,153446');
    assert.ok(upsampled.blockMs < 250, `one window with rate= held the event loop for ${upsampled.blockMs.toFixed(0)} ms`);
  });
});
