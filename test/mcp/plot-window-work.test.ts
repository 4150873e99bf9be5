/**
 * What one `plot_window` may cost (docs/agents.md, `plot_window`): its filters' work, rows × samples read
 * (with the filters' margins and padding) × filter sections × 2 passes, is bounded by `MAX_FILTER_WORK` and
 * refused before anything is read; what is under it runs a slice at a time, so one anonymous plot of a
 * high-rate recording never holds the server: other requests are answered while it filters. The notch removes
 * the line frequency and its harmonics up to 500 Hz (10 sections at 50 Hz), not up to Nyquist (622 at 65,536 Hz).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MAX_FILTER_WORK } from '../../src/recordings/window-plot.js';
import { createAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo } from '../recordings/support.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { call, httpClient, refused } from './support.js';

const RATE = 65_536;
const SECONDS = 16;
const CHANNELS = ['C1', 'C2', 'C3', 'C4'];
const PATH = 'sub-01/ieeg/sub-01_task-rest_ieeg.edf';

/** 16 s of four channels at 65,536 Hz: a 10 Hz sine with 50 Hz hum, a different phase on each channel. */
function highRateRecording(): Uint8Array {
  const signals = CHANNELS.map((label, c) => {
    const samples = new Int16Array(RATE * SECONDS);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 10 * i) / RATE + c) + 2000 * Math.sin((2 * Math.PI * 50 * i) / RATE));
    return { label, unit: 'uV', physicalMin: -3276.8, physicalMax: 3276.7, digitalMin: -32768, digitalMax: 32767, samplesPerRecord: RATE, samples };
  });
  return writeEdf({ recordDuration: 1, records: SECONDS, signals });
}

describe('plot_window filters on a high-rate public recording', () => {
  let server: TestServer;
  let id: string;
  let repo: string;
  let client: Client;
  // HP 0.1 Hz reads 30 s beside the window, cut to the recording and padded by reflection to 3 × 16 s; with LP
  // 100 Hz and the 50 Hz notch (50 to 500 Hz), 12 sections run twice: 24 × 3,145,726 section-samples a row.
  const filters = { hp: 0.1, lp: 100, notch: 50 };
  const window = { start_s: 0, duration_s: SECONDS };

  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    repo = makeRepo([{ bytes: highRateRecording(), to: PATH }]);
    id = await convertedDataset(server, owner.user.id, repo, 'public');
    client = await httpClient(server);
  });
  after(async () => {
    await client.close();
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  /** One anonymous plot, with GET /healthz asked again and again while it runs: its time and the longest wait. */
  async function plotWhileAsked(args: Record<string, unknown>) {
    const started = performance.now();
    let done = false;
    const plot = call<{ rows: string[]; filter: unknown }>(client, 'plot_window', { dataset_id: id, path: PATH, ...window, ...args }).finally(() => (done = true));
    let worst = 0;
    let asked = 0;
    while (!done) {
      const at = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      worst = Math.max(worst, performance.now() - at);
      asked++;
    }
    const { structured } = await plot;
    return { structured, ms: performance.now() - started, worst, asked };
  }

  it(`is refused past ${MAX_FILTER_WORK} section-samples of filtering, before reading, naming the bound and what to narrow`, async () => {
    assert.equal(MAX_FILTER_WORK, 250_000_000);
    const started = performance.now();
    // 4 rows × 24 × 3,145,726 = 301,989,696.
    const body = await refused(client, 'plot_window', { dataset_id: id, path: PATH, ...window, channels: CHANNELS, ...filters });
    const refusedMs = performance.now() - started;
    assert.equal(body.error, 'validation_failed', JSON.stringify(body));
    assert.match(body.message, /^Filtering this plot takes 301989696 section-samples \(4 rows × 3145726 samples, .* × 12 filter sections × 2 passes at 65536 Hz\); one plot may take at most 250000000\.$/);
    assert.deepEqual(body.details?.slice(0, 2), ['duration_s or n_samples: a shorter window', 'channels or channel_type: fewer channels']);
    assert.ok(body.details?.some((d) => /^notch: leave it out \(50 Hz and its harmonics up to 500 Hz are 10 of the 12 sections\)$/.test(d)), JSON.stringify(body.details));
    assert.ok(body.details?.some((d) => d.startsWith('hp: a higher corner')), JSON.stringify(body.details));
    // Refused before any sample is read or filtered: faster than the plot of a single row without filters.
    const plain = await plotWhileAsked({ channels: ['C1'] });
    assert.ok(refusedMs < plain.ms, `the refusal took ${Math.round(refusedMs)} ms, a plot of one unfiltered row ${Math.round(plain.ms)} ms`);
  });

  it('within the bound, answers, and other requests are answered while it filters', async () => {
    // 3 rows × 24 × 3,145,726 = 2.26 × 10^8 section-samples, within the bound: most of a second of filtering.
    const channels = CHANNELS.slice(0, 3);
    await plotWhileAsked({ channels }); // the chunks read once, so both runs below read from the same caches
    const plain = await plotWhileAsked({ channels });
    const filtered = await plotWhileAsked({ channels, ...filters });
    assert.deepEqual(filtered.structured.rows, channels);
    assert.deepEqual(filtered.structured.filter, filters);
    // What the filters add is the filtering; had it run in one piece, one /healthz would have waited about that
    // long. In slices, the longest wait is no longer than without filters, give or take a fraction of the filtering.
    const filtering = filtered.ms - plain.ms;
    assert.ok(filtering > 2 * plain.worst, `the filters took ${Math.round(filtering)} ms, too little to tell (a /healthz waited ${Math.round(plain.worst)} ms without them)`);
    assert.ok(
      filtered.worst < plain.worst + filtering / 4,
      `GET /healthz waited ${Math.round(filtered.worst)} ms behind one anonymous plot_window filtering for ${Math.round(filtering)} ms (${filtered.asked} asked; without filters the longest wait was ${Math.round(plain.worst)} ms)`,
    );
  });
});
