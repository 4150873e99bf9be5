import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset } from '../recordings/support.js';
import { AMPLITUDE, BIG, call, httpClient, privateRepo, publicRepo, readNpy, REAL, refused, SINE, SINE_HZ } from './support.js';

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
