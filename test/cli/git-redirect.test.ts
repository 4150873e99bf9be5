/**
 * `nds datasets upload --git` (`commitAndPush`) gives git the API key as an `http.extraHeader`. With git's
 * default `http.followRedirects` (`initial`), a redirect of the first request (`info/refs`) to another host
 * moved git's base URL there, and every later request (`git-upload-pack`, `git-receive-pack`) took the key
 * with it. The key goes to the server it belongs to only, as with `nds auth git-credential` and the API client.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commitAndPush } from '../../src/cli/dataset-git.js';

const KEY = 'nds_SECRET_KEY_OF_THE_USER';

function listen(handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

describe('the CLI\'s git push and a redirect to another host', { timeout: 60_000 }, () => {
  let root: string;
  let other: http.Server;
  let nds: http.Server;
  const seen: Array<{ method: string; url: string; authorization: string | undefined }> = [];
  before(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'nds-git-redirect-'));
    const repo = path.join(root, 'r.git');
    execFileSync('git', ['init', '-q', '--bare', '--initial-branch=main', repo]);
    execFileSync('git', ['--git-dir', repo, 'config', 'http.receivepack', 'true']);
    // Another host: a plain git smart-HTTP server (git http-backend) that records what it is sent.
    other = await listen((req, res) => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
      const u = new URL(req.url!, 'http://x');
      const child = spawn('git', ['http-backend'], {
        env: { PATH: process.env.PATH, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REQUEST_METHOD: req.method!, PATH_INFO: u.pathname.replace(/^\/git\/nd000001\.git/, '/r.git'), QUERY_STRING: u.search.slice(1), CONTENT_TYPE: req.headers['content-type'] ?? '', GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''), REMOTE_ADDR: '127.0.0.1' },
      });
      req.pipe(child.stdin);
      const out: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.on('close', () => {
        const all = Buffer.concat(out);
        const end = all.indexOf('\r\n\r\n');
        let status = 200;
        const headers: Record<string, string> = {};
        for (const line of all.subarray(0, end).toString().split('\r\n')) {
          const colon = line.indexOf(':');
          const [name, value] = [line.slice(0, colon), line.slice(colon + 1).trim()];
          if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
          else headers[name] = value;
        }
        res.writeHead(status, headers);
        res.end(all.subarray(end + 4));
      });
    });
    // The server the user named: it answers its repository's requests with a redirect to the other host.
    nds = await listen((req, res) => {
      res.writeHead(302, { location: `http://localhost:${(other.address() as AddressInfo).port}${req.url}` });
      res.end();
    });
  });
  after(() => {
    nds?.close();
    other?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('never sends the API key to the host a redirect names', async () => {
    const file = path.join(root, 'dataset_description.json');
    writeFileSync(file, '{"Name": "x", "BIDSVersion": "1.9.0"}\n');
    await commitAndPush({
      gitUrl: `http://127.0.0.1:${(nds.address() as AddressInfo).port}/git/nd000001.git`,
      apiKey: KEY,
      files: [{ path: 'dataset_description.json', abs: file, size: 37, sha256: '0'.repeat(64) }],
      message: 'upload',
      author: { name: 'T', email: 't@example.org' },
      remoteExists: true,
    }).catch(() => undefined);
    const leaked = seen.filter((r) => r.authorization?.includes(KEY));
    assert.deepEqual(leaked.map((r) => `${r.method} ${r.url}`), [], 'requests to the other host that carried the API key');
  });
});
