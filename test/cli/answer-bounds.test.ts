/**
 * A broken or hostile server answering hundreds of MiB (here 300 MiB of JSON, generated as it is sent) must not
 * be taken into memory by `nds`, `nds/client`, an upload or `nds mcp`: each reads an answer up to a bound (64 MiB
 * of JSON, 64 KiB of an error, 512 MiB of a listing such as a manifest), then closes the connection and fails
 * with an error naming the bound and the path. Answers of ordinary size read as before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { NdsApiError, NdsClient } from '../../src/client/index.js';
import { putFile, TransferError } from '../../src/cli/http-transfer.js';
import { runMcpProxy } from '../../src/cli/mcp-proxy.js';
import { MiB, startHostileServer, type HostileServer } from '../clients/hostile-answers.js';
import { nds } from '../support/cli.js';

const HUGE = 300 * MiB;
/** Far below the whole body: what the client read up to its bound, and what the sockets' buffers held. */
const READ_JSON = 128 * MiB;
const READ_ERROR = 32 * MiB;

const manifest = { dataset_id: 'nd000003', version: '1.0.0', files: [{ path: 'README', size: 3, sha256: 'a'.repeat(64) }] };
const recording = { dataset_id: 'nd000003', path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', zarr: 'x', store_url: 'x', source_commit: null, entities: { subject: '01', session: null, task: 'rest', run: null, acquisition: null, datatype: 'eeg' }, groups: [], events: { n_events: 0, counts: {} } };

async function assertStoppedEarly(hostile: HostileServer, at: string, most: number): Promise<void> {
  const seen = await hostile.closed(at);
  assert.equal(seen.finished, false, `the client read all ${seen.bytes} bytes of ${at}`);
  assert.ok(seen.bytes < most, `${seen.bytes} bytes of ${at} went out before the client closed (expected under ${most})`);
}

describe('`nds` and answers past their bound', { timeout: 120_000 }, () => {
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostileServer(
      {
        '/recordings': { status: 200, bytes: HUGE },
        '/datasets/nd000001': { status: 404, bytes: HUGE },
        '/datasets/nd000002/manifest': { status: 200, bytes: 600 * MiB, announce: true },
      },
      { '/datasets/nd000003/manifest': manifest },
    );
  });
  after(() => hostile.close());

  it('fails a command whose JSON answer passes 64 MiB, naming the bound and the path, and reads no further', async () => {
    const r = await nds(['recordings', 'list'], { NDS_API_URL: hostile.url });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the answer to \/recordings \(HTTP 200\) is larger than 64 MiB/);
    await assertStoppedEarly(hostile, '/recordings', READ_JSON);
  });

  it('fails on an error answer past 64 KiB without reading the rest', async () => {
    const r = await nds(['datasets', 'show', 'nd000001'], { NDS_API_URL: hostile.url });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the answer to \/datasets\/nd000001 \(HTTP 404\) is larger than 64 KiB/);
    await assertStoppedEarly(hostile, '/datasets/nd000001', READ_ERROR);
  });

  it('refuses a manifest announced past 512 MiB before reading it', async () => {
    const r = await nds(['datasets', 'manifest', 'nd000002'], { NDS_API_URL: hostile.url });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the answer to \/datasets\/nd000002\/manifest \(HTTP 200\) is larger than 512 MiB/);
    await assertStoppedEarly(hostile, '/datasets/nd000002/manifest', READ_ERROR);
  });

  it('reads an answer of ordinary size as before', async () => {
    const r = await nds(['datasets', 'manifest', 'nd000003', '--json'], { NDS_API_URL: hostile.url });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), manifest);
  });
});

describe('nds/client and answers past their bound', { timeout: 120_000 }, () => {
  let hostile: HostileServer;
  let ordinary: HostileServer;
  before(async () => {
    hostile = await startHostileServer({
      '/recordings': { status: 200, bytes: HUGE },
      '/datasets/nd000001/signal': { status: 200, bytes: HUGE, contentType: 'application/octet-stream', headers: { 'x-nds-shape': '1,1' } },
      '/datasets/nd000002/signal': { status: 403, bytes: HUGE },
      '/windows': { status: 200, bytes: 600 * MiB, announce: true },
    });
    ordinary = await startHostileServer({}, { '/recordings': { recordings: [recording], next_cursor: null } });
  });
  after(async () => {
    await hostile.close();
    await ordinary.close();
  });
  const client = () => new NdsClient({ baseUrl: hostile.url, env: {}, retries: 0 });
  const tooLarge = (status: number, bound: RegExp) => (err: unknown) => {
    assert.ok(err instanceof NdsApiError, String(err));
    assert.equal(err.code, 'answer_too_large');
    assert.equal(err.status, status);
    assert.match(err.message, bound);
    return true;
  };

  it('listRecordings: a page past 64 MiB is an NdsApiError answer_too_large, read no further', async () => {
    await assert.rejects(client().listRecordings(), tooLarge(200, /\/recordings .*larger than 64 MiB/));
    await assertStoppedEarly(hostile, '/recordings', READ_JSON);
  });

  it('readWindow: a window past 64 MiB (the most values a window has, as float32) is refused', async () => {
    await assert.rejects(client().readWindow({ dataset_id: 'nd000001', path: 'a.edf', start_sample: 0, n_samples: 1 }), tooLarge(200, /\/datasets\/nd000001\/signal .*larger than 64 MiB/));
    await assertStoppedEarly(hostile, '/datasets/nd000001/signal', READ_JSON);
  });

  it('a refusal past 64 KiB is answer_too_large with the refusal\'s status', async () => {
    await assert.rejects(client().readWindow({ dataset_id: 'nd000002', path: 'a.edf', start_sample: 0, n_samples: 1 }), tooLarge(403, /larger than 64 KiB/));
    await assertStoppedEarly(hostile, '/datasets/nd000002/signal', READ_ERROR);
  });

  it('listWindows: a list announced past 512 MiB is refused before it is read', async () => {
    await assert.rejects(client().listWindows({ fixed: { length_s: 1 } }), tooLarge(200, /\/windows .*larger than 512 MiB/));
    await assertStoppedEarly(hostile, '/windows', READ_ERROR);
  });

  it('reads an answer of ordinary size as before', async () => {
    assert.deepEqual(await new NdsClient({ baseUrl: ordinary.url, env: {} }).listRecordings(), [recording]);
  });
});

describe('an object store\'s answer to an upload, past its bound', { timeout: 60_000 }, () => {
  let hostile: HostileServer;
  let tmp: string;
  before(async () => {
    hostile = await startHostileServer({ '/bucket/object': { status: 403, bytes: HUGE, contentType: 'application/xml' } });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-answer-bounds-'));
  });
  after(async () => {
    await hostile.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('fails the upload with the refusal, having read no more than 64 KiB of it', async () => {
    const file = path.join(tmp, 'part');
    writeFileSync(file, 'sixteen bytes!!\n');
    await assert.rejects(putFile({ url: `${hostile.url}/bucket/object`, headers: {} }, file, 16, () => undefined), (err: unknown) => err instanceof TransferError && err.status === 403);
    await assertStoppedEarly(hostile, '/bucket/object', READ_ERROR);
  });
});

describe('`nds mcp` and an answer past its bound', { timeout: 60_000 }, () => {
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostileServer({ '/mcp': { status: 200, bytes: HUGE } });
  });
  after(() => hostile.close());

  it('answers the agent with a JSON-RPC error naming the bound, and reads no further', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    // The pipe ends when its process does (`nds mcp`): here it is left to the garbage collector.
    void runMcpProxy({ baseUrl: hostile.url, apiKey: undefined }, stdin, stdout);
    const answer = new Promise<{ id: number; error?: { message: string } }>((resolve) => {
      let text = '';
      stdout.on('data', (d) => {
        text += d;
        const line = text.split('\n').find((l) => l.trim() !== '');
        if (text.includes('\n') && line) resolve(JSON.parse(line) as { id: number; error?: { message: string } });
      });
    });
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })}\n`);
    const reply = await answer;
    stdin.end();
    assert.equal(reply.id, 1);
    assert.match(reply.error?.message ?? '', /\/mcp \(HTTP 200\) is larger than 64 MiB/);
    await assertStoppedEarly(hostile, '/mcp', READ_JSON);
  });
});
