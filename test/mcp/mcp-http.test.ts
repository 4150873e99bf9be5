import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset } from '../recordings/support.js';
import { traceLayout } from '../../src/signals/trace-layout.js';
import { AMPLITUDE, BIG, call, decodePng, httpClient, privateRepo, publicRepo, readNpy, REAL, refused, SINE, SINE_HZ } from './support.js';

const TOOLS = ['get_dataset', 'get_events', 'list_recordings', 'plot_window', 'read_window', 'search_datasets', 'summarize_window'];

describe('the MCP server over streamable HTTP (POST /mcp)', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let id: string;
  let privateId: string;
  let anonymous: Client;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    repos.push(publicRepo(), privateRepo());
    id = await convertedDataset(server, owner.user.id, repos[0]!);
    privateId = await convertedDataset(server, owner.user.id, repos[1]!, 'private');
    anonymous = await httpClient(server);
  });
  after(async () => {
    await anonymous?.close();
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it('lists the seven tools, each with a JSON Schema of its arguments', async () => {
    const { tools } = await anonymous.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const read = tools.find((t) => t.name === 'read_window')!;
    assert.equal(read.inputSchema.type, 'object');
    assert.deepEqual((read.inputSchema.required as string[]).sort(), ['dataset_id', 'path']);
    const props = read.inputSchema.properties as Record<string, { type?: string; enum?: string[] }>;
    for (const name of ['start_s', 'start_sample', 'duration_s', 'n_samples', 'channels', 'channel_type', 'rate', 'format']) assert.ok(props[name], name);
    assert.deepEqual(props.format!.enum, ['json', 'npy']);
    assert.equal(props.channels!.type, 'array');
    const plot = tools.find((t) => t.name === 'plot_window')!;
    assert.equal((plot.inputSchema.properties as Record<string, { maximum?: number }>).duration_s!.maximum, 60);
    assert.equal((plot.inputSchema.properties as Record<string, { maximum?: number }>).width!.maximum, 1600);
    for (const t of tools) assert.ok(t.outputSchema, `${t.name} declares its answer`);
  });

  it('search_datasets, get_dataset, list_recordings and get_events answer from the catalogue', async () => {
    const found = await call<{ total: number; datasets: Array<{ id: string; recordings: number; hours: number; subjects: number | null; modalities: string[] }> }>(anonymous, 'search_datasets', { modality: 'eeg', limit: 5 });
    const mine = found.structured.datasets.find((d) => d.id === id)!;
    assert.equal(mine.recordings, 3);
    assert.ok(Math.abs(mine.hours - (6 + 20 + 64) / 3600) < 0.01, String(mine.hours));
    assert.ok(mine.modalities.includes('eeg'));
    const dataset = await call<{ dataset: { id: string }; recordings: { count: number; items: Array<{ path: string; groups: Array<{ rate: number; n_channels: number }> }> }; failures: unknown[] }>(anonymous, 'get_dataset', { dataset_id: id });
    assert.equal(dataset.structured.recordings.count, 3);
    assert.deepEqual(dataset.structured.recordings.items.map((r) => r.path).sort(), [REAL, SINE, BIG].sort());
    assert.deepEqual(dataset.structured.failures, []);
    const page = await call<{ recordings: Array<{ path: string }>; next_cursor: string | null }>(anonymous, 'list_recordings', { dataset: id, limit: 2 });
    assert.equal(page.structured.recordings.length, 2);
    const rest = await call<{ recordings: Array<{ path: string }>; next_cursor: string | null }>(anonymous, 'list_recordings', { dataset: id, limit: 2, cursor: page.structured.next_cursor });
    assert.deepEqual([...page.structured.recordings, ...rest.structured.recordings].map((r) => r.path).sort(), [REAL, SINE, BIG].sort());
    assert.equal(rest.structured.next_cursor, null);
    const withEog = await call<{ recordings: Array<{ path: string }> }>(anonymous, 'list_recordings', { channel_type: 'EOG' });
    assert.deepEqual(withEog.structured.recordings.map((r) => r.path), [SINE]);
    const events = await call<{ total: number; truncated: boolean; events: Array<{ onset: number; duration: number; sample: number; trial_type: string; value: string }> }>(anonymous, 'get_events', { dataset_id: id, path: SINE, trial_type: 'stimulus', start_s: 3 });
    assert.deepEqual(events.structured.events, [{ onset: 12.5, duration: 1, sample: 12.5 * 256, trial_type: 'stimulus', value: '1' }]);
    const real = await call<{ total: number; truncated: boolean; events: unknown[] }>(anonymous, 'get_events', { dataset_id: id, path: REAL, limit: 2 });
    assert.ok(real.structured.total > 2 && real.structured.truncated && real.structured.events.length === 2, JSON.stringify(real.structured).slice(0, 200));
  });

  it('lists and reads the dataset and recording resources, and hides a private one', async () => {
    const { resources } = await anonymous.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes(`nds://datasets/${id}`), uris.join(' '));
    assert.ok(uris.includes(`nds://datasets/${id}/recordings/${SINE}`), uris.join(' '));
    assert.ok(!uris.some((u) => u.includes(privateId)), 'no private resource');
    const recording = await anonymous.readResource({ uri: `nds://datasets/${id}/recordings/${SINE}` });
    const body = JSON.parse((recording.contents[0] as { text: string }).text) as { path: string; groups: Array<{ channels: unknown[] }> };
    assert.equal(body.path, SINE);
    assert.equal(body.groups[0]!.channels.length, 6);
    const dataset = await anonymous.readResource({ uri: `nds://datasets/${id}` });
    assert.equal((JSON.parse((dataset.contents[0] as { text: string }).text) as { dataset: { id: string } }).dataset.id, id);
    const hidden = await anonymous.readResource({ uri: `nds://datasets/${privateId}` }).catch((err: { code: number; message: string }) => err);
    const unknown = await anonymous.readResource({ uri: 'nds://datasets/nd999999' }).catch((err: { code: number; message: string }) => err);
    assert.equal((hidden as { code: number }).code, -32002);
    assert.equal((hidden as { message: string }).message.replace(privateId, 'ID'), (unknown as { message: string }).message.replace('nd999999', 'ID'));
  });

  it('read_window as json equals the signal route\'s json, float32 values not rounded', async () => {
    const args = { dataset_id: id, path: SINE, start_sample: 100, n_samples: 500, channels: ['Fz', 'EOG'] };
    const { structured } = await call<{ data: number[][]; shape: number[]; channels: string[]; rate: number; start_sample: number }>(anonymous, 'read_window', { ...args, format: 'json' });
    const res = await apiFetch(server, `/datasets/${id}/signal?path=${encodeURIComponent(SINE)}&start_sample=100&n_samples=500&channels=Fz,EOG&format=json`);
    assert.equal(res.status, 200, await res.clone().text());
    const http = (await res.json()) as { data: number[][]; channels: string[]; rate: number; start_sample: number; shape: number[] };
    assert.deepEqual(structured.data, http.data);
    assert.deepEqual(structured.channels, http.channels);
    assert.deepEqual(structured.shape, [2, 500]);
    assert.equal(structured.rate, http.rate);
    assert.equal(structured.start_sample, 100);
    // Exact float32 values: each number is a float32, and more digits than six significant ones survive.
    assert.ok(structured.data.flat().every((v) => Math.fround(v) === v), 'float32 values');
    assert.ok(structured.data.flat().some((v) => Number(v.toPrecision(6)) !== v), 'more than six significant digits');
  });

  it('read_window as npy is an embedded resource equal to the signal route\'s .npy byte for byte, with a link to it', async () => {
    const { result, structured } = await call<{ signal_url: string; shape: number[] }>(anonymous, 'read_window', { dataset_id: id, path: REAL, start_s: 1, duration_s: 2, format: 'npy' });
    const resource = result.content.find((c) => c.type === 'resource');
    assert.ok(resource && resource.type === 'resource' && 'blob' in resource.resource, 'an embedded resource');
    assert.equal(resource.resource.mimeType, 'application/x-npy');
    const bytes = Buffer.from(resource.resource.blob as string, 'base64');
    const http = new Uint8Array(await (await apiFetch(server, `/datasets/${id}/signal?path=${encodeURIComponent(REAL)}&start=1&duration=2&format=npy`)).arrayBuffer());
    assert.ok(Buffer.compare(bytes, Buffer.from(http)) === 0, 'the same bytes');
    assert.deepEqual(readNpy(bytes).shape, structured.shape);
    const link = result.content.find((c) => c.type === 'resource_link');
    assert.ok(link && link.type === 'resource_link', 'a resource link');
    assert.equal(link.uri, structured.signal_url);
    const linked = new Uint8Array(await (await fetch(link.uri)).arrayBuffer());
    assert.ok(Buffer.compare(bytes, Buffer.from(linked)) === 0, 'the link reads the same window');
  });

  it('read_window answers a million channel-samples as npy', async () => {
    const { structured, result } = await call<{ shape: number[] }>(anonymous, 'read_window', { dataset_id: id, path: BIG, start_sample: 100, n_samples: 15_625, format: 'npy' });
    assert.deepEqual(structured.shape, [64, 15_625]);
    const resource = result.content.find((c) => c.type === 'resource')!;
    const bytes = Buffer.from((resource as { resource: { blob: string } }).resource.blob, 'base64');
    assert.equal(readNpy(bytes).data.length, 1_000_000);
    const http = Buffer.from(await (await apiFetch(server, `/datasets/${id}/signal?path=${encodeURIComponent(BIG)}&start_sample=100&n_samples=15625`)).arrayBuffer());
    assert.ok(Buffer.compare(bytes, http) === 0, 'the same bytes as the signal route');
  });

  it('read_window as npy in a batch: each answer its own window (channels in the order asked, resampled), the body exactly as long as it says', async () => {
    type Answer = { id: number; result: { content: Array<{ type: string; resource?: { blob: string } }> } };
    const windows = [
      { start_sample: 0, n_samples: 1001 },
      { start_sample: 2000, n_samples: 14_000, channels: ['E64', 'E2', 'E1', 'E33'] },
      { start_sample: 256, n_samples: 2000, channels: ['E5', 'E4'], rate: 128 },
    ];
    const asks = windows.map((w, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'read_window', arguments: { dataset_id: id, path: BIG, ...w, format: 'npy' } } }));
    const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(asks) });
    assert.equal(res.status, 200);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.headers.get('content-length'), String(body.byteLength));
    const answers = JSON.parse(body.toString('utf8')) as Answer[];
    for (const [i, w] of windows.entries()) {
      const blob = answers.find((a) => a.id === i + 1)!.result.content.find((c) => c.type === 'resource')!.resource!.blob;
      const channels = (w.channels ? `&channels=${w.channels.join(',')}` : '') + (w.rate ? `&rate=${w.rate}` : '');
      const http = Buffer.from(await (await apiFetch(server, `/datasets/${id}/signal?path=${encodeURIComponent(BIG)}&start_sample=${w.start_sample}&n_samples=${w.n_samples}${channels}&format=npy`)).arrayBuffer());
      assert.ok(Buffer.compare(Buffer.from(blob, 'base64'), http) === 0, `window ${i + 1}: the signal route's bytes`);
      assert.deepEqual(readNpy(Buffer.from(blob, 'base64')).shape, [w.channels?.length ?? 64, w.rate ? w.n_samples / 2 : w.n_samples]);
    }
  });

  it('summarize_window finds 10 Hz in a 10 Hz sine, its power in alpha, and flags flat, clipped and bad channels', async () => {
    type Summary = { label: string; min: number; max: number; mean: number; std: number; dominant_hz: number; band_power: Record<string, number>; line_noise: { hz50: number; hz60: number }; flags: { flat: boolean; clipped: boolean; bad: boolean } };
    const { structured } = await call<{ rate: number; channels: Summary[]; psd: { resolution_hz: number } }>(anonymous, 'summarize_window', { dataset_id: id, path: SINE, start_s: 2, duration_s: 16 });
    const by = Object.fromEntries(structured.channels.map((c) => [c.label, c]));
    const fz = by.Fz!;
    assert.equal(fz.dominant_hz, SINE_HZ);
    assert.ok(Math.abs(fz.max - AMPLITUDE) < 0.1 && Math.abs(fz.min + AMPLITUDE) < 0.1, `${fz.min}..${fz.max}`);
    assert.ok(Math.abs(fz.mean) < 0.05, String(fz.mean));
    assert.ok(Math.abs(fz.std - AMPLITUDE / Math.SQRT2) < 0.1, String(fz.std));
    // A sine's power is A²/2, almost all of it in the alpha band (8-13 Hz), none at the mains frequencies.
    assert.ok(Math.abs(fz.band_power.alpha! - (AMPLITUDE * AMPLITUDE) / 2) / ((AMPLITUDE * AMPLITUDE) / 2) < 0.05, String(fz.band_power.alpha));
    for (const band of ['delta', 'theta', 'beta', 'gamma']) assert.ok(fz.band_power[band]! < fz.band_power.alpha! / 100, band);
    assert.ok(fz.line_noise.hz50 < fz.band_power.alpha! / 1000 && fz.line_noise.hz60 < fz.band_power.alpha! / 1000, 'no line noise');
    assert.deepEqual(fz.flags, { flat: false, clipped: false, bad: false });
    assert.equal(by.EOG!.dominant_hz, 1);
    assert.deepEqual(by.Pz!.flags, { flat: false, clipped: false, bad: true });
    assert.deepEqual(by.FLAT!.flags, { flat: true, clipped: false, bad: false });
    assert.equal(by.FLAT!.dominant_hz, null);
    assert.deepEqual(by.CLIP!.flags, { flat: false, clipped: true, bad: false });
    assert.ok(structured.psd.resolution_hz <= 0.25, String(structured.psd.resolution_hz));
  });

  it('plot_window draws a decodable PNG whose traces sit where the viewer puts them: rows, µV per division, events', async () => {
    const width = 1000;
    const height = 400;
    const { structured, result } = await call<{ viewer_url: string; rows: string[]; width: number; height: number }>(anonymous, 'plot_window', {
      dataset_id: id, path: SINE, start_s: 1, duration_s: 10, channels: ['Fz', 'Cz', 'EOG'], scale: 'eeg:200', width, height,
    });
    const image = result.content.find((c) => c.type === 'image');
    assert.ok(image && image.type === 'image' && image.mimeType === 'image/png', 'an image');
    const png = decodePng(Buffer.from(image.data, 'base64'));
    writeFileSync(path.join(os.tmpdir(), 'nds-plot_window.png'), Buffer.from(image.data, 'base64'));
    assert.deepEqual([png.width, png.height, structured.width, structured.height], [width, height, width, height]);
    assert.deepEqual(structured.rows, ['Fz', 'Cz', 'EOG']);
    // The viewer's layout (docs/viewer.md): labels left, events above, times below, one row per channel.
    const l = traceLayout(width, height, 3);
    const at = (x: number, y: number) => png.rgb[y * width + x]!;
    /** The rows of pixels of `colour` in the plot's columns [x0, x1): the trace's vertical extent. */
    const extent = (colour: number, yFrom: number, yTo: number) => {
      let top = Infinity;
      let bottom = -Infinity;
      for (let y = Math.max(0, Math.floor(yFrom)); y < Math.min(height, Math.ceil(yTo)); y++) {
        for (let x = l.plotLeft + 5; x < l.plotLeft + l.plotWidth - 5; x++) if (at(x, y) === colour) ((top = Math.min(top, y)), (bottom = Math.max(bottom, y)));
      }
      return [top, bottom];
    };
    const EEG = 0x1f4e9c;
    const EOG = 0x2f7d32;
    // Fz and Cz: 50 µV sines at 200 µV a division (a division is a row) span a quarter row each side of their row's middle.
    for (const row of [0, 1]) {
      const middle = l.plotTop + (row + 0.5) * l.rowHeight;
      const [top, bottom] = extent(EEG, l.plotTop + row * l.rowHeight, l.plotTop + (row + 1) * l.rowHeight);
      assert.ok(Math.abs(top - (middle - (50 / 200) * l.rowHeight)) <= 1.5, `row ${row} top ${top}, expected ${middle - l.rowHeight / 4}`);
      assert.ok(Math.abs(bottom - (middle + (50 / 200) * l.rowHeight)) <= 1.5, `row ${row} bottom ${bottom}, expected ${middle + l.rowHeight / 4}`);
    }
    // EOG: 200 µV at the EOG default of 300 µV a division, two thirds of a row each side.
    const eogMiddle = l.plotTop + 2.5 * l.rowHeight;
    const [eogTop, eogBottom] = extent(EOG, 0, height);
    assert.ok(Math.abs(eogTop - (eogMiddle - (200 / 300) * l.rowHeight)) <= 1.5, `EOG top ${eogTop}`);
    assert.ok(Math.abs(eogBottom - Math.min(l.plotTop + l.plotHeight - 1, eogMiddle + (200 / 300) * l.rowHeight)) <= 1.5, `EOG bottom ${eogBottom}`);
    // Events at 2 s (stimulus) and 5 s (response): a line of their colour through the plot, at their time.
    for (const [onset, colour] of [[2, 0xe07b00], [5, 0x0a8f8f]] as const) {
      const x = Math.round(l.plotLeft + ((onset - 1) / 10) * l.plotWidth);
      assert.equal(at(x, Math.round(l.plotTop + l.plotHeight / 2 + 3)), colour, `event at ${onset} s`);
    }
    // Labels and times are drawn: ink in the label column beside each row, and under the plot.
    const inked = (x0: number, x1: number, y0: number, y1: number) => { for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (at(x, y) !== 0xffffff) return true; return false; };
    for (const row of [0, 1, 2]) assert.ok(inked(0, 60, Math.round(l.plotTop + (row + 0.5) * l.rowHeight - 4), Math.round(l.plotTop + (row + 0.5) * l.rowHeight + 4)), `label of row ${row}`);
    assert.ok(inked(l.plotLeft, width, l.plotTop + l.plotHeight + 4, height), 'time labels');
    const viewer = new URL(structured.viewer_url);
    assert.equal(viewer.pathname, `/datasets/${id}`);
    assert.deepEqual(['t', 'span', 'ch', 'scale', 'group'].map((k) => viewer.searchParams.get(k)), ['1', '10', 'Fz,Cz,EOG', 'eeg:200', 'eeg_256hz']);
    assert.ok(viewer.searchParams.get('recording'), 'the recording');
  });

  it('plot_window filters, re-references and refuses spans over 60 s', async () => {
    const { structured } = await call<{ viewer_url: string; reference: string }>(anonymous, 'plot_window', { dataset_id: id, path: SINE, hp: 1, lp: 40, notch: 50, ref: 'avg', channels: ['Fz', 'Cz'] });
    const viewer = new URL(structured.viewer_url).searchParams;
    assert.deepEqual(['t', 'span', 'hp', 'lp', 'notch', 'ref'].map((k) => viewer.get(k)), ['0', '10', '1', '40', '50', 'avg']);
    assert.equal(structured.reference, 'avg');
    const long = await refused(anonymous, 'plot_window', { dataset_id: id, path: BIG, duration_s: 61 });
    assert.match(long.message, /60/);
  });

  it('a private dataset is unknown to an anonymous or foreign caller, with the same error as an unknown id', async () => {
    const foreign = await httpClient(server, stranger.key);
    try {
      for (const client of [anonymous, foreign]) {
        const unknown = await refused(client, 'get_dataset', { dataset_id: 'nd999999' });
        const hidden = await refused(client, 'get_dataset', { dataset_id: privateId });
        assert.equal(unknown.error, 'dataset_not_found');
        assert.deepEqual({ ...hidden, message: hidden.message.replace(privateId, 'ID') }, { ...unknown, message: unknown.message.replace('nd999999', 'ID') });
        for (const tool of ['read_window', 'get_events', 'summarize_window']) {
          const a = await refused(client, tool, { dataset_id: 'nd999999', path: REAL, duration_s: 1 });
          const b = await refused(client, tool, { dataset_id: privateId, path: REAL, duration_s: 1 });
          assert.equal(b.error, a.error, tool);
          assert.equal(b.message.replace(privateId, 'ID'), a.message.replace('nd999999', 'ID'), tool);
        }
        const listed = await call<{ recordings: Array<{ dataset_id: string }> }>(client, 'list_recordings', { dataset: privateId });
        assert.deepEqual(listed.structured.recordings, []);
        const found = await call<{ datasets: Array<{ id: string }> }>(client, 'search_datasets', {});
        assert.ok(!found.structured.datasets.some((d) => d.id === privateId), 'not found by search');
      }
    } finally {
      await foreign.close();
    }
  });

  it("the owner's key reads the private dataset, and the npy link reads it without a key through a read grant", async () => {
    const client = await httpClient(server, owner.key);
    try {
      const { structured } = await call<{ dataset: { id: string; visibility: string } }>(client, 'get_dataset', { dataset_id: privateId });
      assert.equal(structured.dataset.visibility, 'private');
      const { result } = await call(client, 'read_window', { dataset_id: privateId, path: REAL, duration_s: 1, format: 'npy' });
      const link = result.content.find((c) => c.type === 'resource_link') as { uri: string };
      assert.match(link.uri, /[?&]grant=ndsg\./);
      const linked = await fetch(link.uri);
      assert.equal(linked.status, 200);
      // The grant is a credential in the URL: no shared cache keeps what it read, to serve after it ended.
      assert.equal(linked.headers.get('cache-control'), 'private, no-store');
      const again = await fetch(link.uri, { headers: { 'if-none-match': linked.headers.get('etag')! } });
      assert.equal(again.status, 304);
      assert.equal(again.headers.get('cache-control'), 'private, no-store');
      const embedded = (result.content.find((c) => c.type === 'resource') as { resource: { blob: string } }).resource.blob;
      assert.ok(Buffer.compare(Buffer.from(await linked.arrayBuffer()), Buffer.from(embedded, 'base64')) === 0, 'the link reads the embedded bytes');
      // Without its grant, the same URL is an unknown dataset.
      const bare = await fetch(link.uri.replace(/&grant=[^&]+/, ''));
      assert.equal(bare.status, 404);
      const forged = await fetch(link.uri.replace(/grant=ndsg\.[^&]+/, `grant=${encodeURIComponent(`ndsg.${privateId}.9999999999.private.AAAA`)}`));
      assert.equal(forged.status, 404);
    } finally {
      await client.close();
    }
  });

  it('malformed arguments get MCP errors, never a 500', async () => {
    for (const args of [{}, { dataset_id: 42 }, { dataset_id: 'nd000001', path: REAL, format: 'csv' }, { dataset_id: id, path: REAL, start_s: -1 }, { dataset_id: id, path: REAL, channels: 'Fp1' }]) {
      const result = await anonymous.callTool({ name: 'read_window', arguments: args });
      assert.equal(result.isError, true, JSON.stringify(args));
    }
    const both = await refused(anonymous, 'read_window', { dataset_id: id, path: REAL, start_s: 1, start_sample: 3 });
    assert.equal(both.error, 'validation_failed');
    const tooBig = await refused(anonymous, 'read_window', { dataset_id: id, path: BIG, format: 'json' });
    assert.equal(tooBig.error, 'validation_failed');
    assert.match(tooBig.message, /100000/);
    const unknownTool = await anonymous.callTool({ name: 'rm_rf', arguments: {} });
    assert.equal(unknownTool.isError, true);
    // Below the SDK: bodies that are not JSON-RPC are JSON-RPC errors with 4xx statuses.
    const post = (body: string, type = 'application/json') => fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': type, accept: 'application/json, text/event-stream' }, body });
    for (const [body, status, code] of [['{', 400, -32700], ['{"jsonrpc":"2.0","method":"tools/list","id":"\\u0000"}', 400, -32600], ['{"hello":1}', 400, -32700]] as const) {
      const res = await post(body);
      assert.equal(res.status, status, body);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, code, body);
    }
    assert.equal((await post('{}', 'text/plain')).status, 415);
    const get = await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const badKey = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer nds_nope' }, body: '{}' });
    assert.equal(badKey.status, 401);
  });
});
