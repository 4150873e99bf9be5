/**
 * A hostile server (or the object endpoint it names) against `nds datasets download`: the manifest says how big
 * each file is, and one file of a few bytes must not fill the user's disk. The download stops reading a file
 * once more bytes come (or are announced) than the manifest promised.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiClient } from '../../src/cli/api-client.js';
import { downloadDataset } from '../../src/cli/dataset-download.js';
import type { Progress } from '../../src/cli/transfer-progress.js';

const PROMISED = Buffer.from('sixteen bytes!!\n');
const SENT_MIB = 64;

describe('a download reads no more of a file than its manifest size', { timeout: 60_000 }, () => {
  let hostile: http.Server;
  let url: string;
  let tmp: string;
  let announcedAsks = 0;
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-download-bounds-'));
    hostile = http.createServer((req, res) => {
      if (req.url?.endsWith('/manifest')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ version: '1.0.0', files: [{ path: 'README', size: PROMISED.length, sha256: createHash('sha256').update(PROMISED).digest('hex') }] }));
      } else if (req.url?.endsWith('/download-credentials')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ token: 't', endpoint: req.url.includes('nd000002') ? `${url}/announced/` : `${url}/objects/`, expires_at: new Date(Date.now() + 3_600_000).toISOString() }));
      } else if (req.url?.includes('/announced/')) {
        // An object that announces far more than promised: refused before a byte is read, and not asked again.
        announcedAsks++;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(SENT_MIB << 20) });
        res.end();
      } else {
        // The object: far more than promised (a real attack would not stop).
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const mib = Buffer.alloc(1 << 20, 0x41);
        let left = SENT_MIB;
        const more = () => {
          while (left > 0) {
            left--;
            if (!res.write(mib)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('close', () => (left = 0));
        more();
      }
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  after(async () => {
    hostile.closeAllConnections();
    await new Promise<void>((r) => hostile.close(() => r()));
    rmSync(tmp, { recursive: true, force: true });
  });

  it('fails the file without taking in more than its manifest size (plus one read)', async () => {
    let received = 0;
    let peak = 0;
    const progress: Progress = {
      start() {},
      advance(n) {
        received += n;
        peak = Math.max(peak, received);
      },
      skip() {},
      log() {},
      stop() {},
    };
    const folder = path.join(tmp, 'out');
    await assert.rejects(downloadDataset(new ApiClient(url, undefined), 'nd000001', folder, { concurrency: 1, retries: 0, progress }));
    assert.ok(peak <= PROMISED.length + (1 << 20), `took in ${peak} bytes for a file of ${PROMISED.length}`);
    assert.deepEqual(readdirSync(folder), [], 'no partial file is left');
  });

  it('fails a file whose announced length passes its manifest size, once, without retrying', async () => {
    const folder = path.join(tmp, 'announced');
    await assert.rejects(downloadDataset(new ApiClient(url, undefined), 'nd000002', folder, { concurrency: 1, retries: 3, progress: { start() {}, advance() {}, skip() {}, log() {}, stop() {} } }), /the manifest says 16/);
    assert.equal(announcedAsks, 1);
    assert.deepEqual(readdirSync(folder), [], 'no partial file is left');
  });
});
