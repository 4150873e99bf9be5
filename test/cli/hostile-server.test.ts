/**
 * What `nds` does with answers of a server it is pointed at: it runs no command they name.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkedGitUrl } from '../../src/cli/dataset-git.js';
import { nds } from '../support/cli.js';

describe('a hostile server\'s git_url and `nds datasets upload`', { timeout: 60_000 }, () => {
  let hostile: http.Server;
  let url: string;
  let tmp: string;
  let marker: string;
  const asked: string[] = [];
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-hostile-giturl-'));
    marker = path.join(tmp, 'ran-a-command-of-the-server');
    hostile = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const p = req.url ?? '';
      if (req.method === 'GET' && p === '/datasets/nd000001') return answer(200, { id: 'nd000001', source_repo: null, hosted_repo: true, git_url: `--upload-pack=touch ${marker};` });
      if (p.endsWith('/multipart-uploads')) return answer(200, { part_threshold: 1e12 });
      if (p.endsWith('/upload-urls')) {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => answer(200, { files: (JSON.parse(body) as { files: Array<{ path: string }> }).files.map((f) => ({ path: f.path, status: 'present' })) }));
        return;
      }
      if (p === '/users/me') return answer(200, { username: 'ada', email: 'ada@example.org' });
      answer(404, { error: 'not_found', message: 'no such route' });
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => hostile.close(() => r()));
    rmSync(tmp, { recursive: true, force: true });
  });

  it('runs no command the server named', async () => {
    const folder = path.join(tmp, 'bids');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'README'), 'a dataset\n');
    writeFileSync(path.join(folder, 'dataset_description.json'), JSON.stringify({ Name: 'x', BIDSVersion: '1.9.0' }));
    const r = await nds(['datasets', 'upload', 'nd000001', folder, '--force', '--no-create-version'], {
      NDS_API_URL: url,
      NDS_API_KEY: 'nds_review_key',
      NDS_UPLOAD_HASH_CACHE: 'off',
    });
    assert.ok(asked.includes('GET /users/me'), `the upload reached its git step: ${asked.join(', ')}; ${r.stderr}`);
    assert.ok(!existsSync(marker), `the server's command ran on this machine (nds said: ${r.stderr.trim()})`);
  });
});

describe('the git_url `nds datasets upload` takes', () => {
  const api = 'https://nds.example.org';
  it('is an http(s) URL of the API\'s own origin', () => {
    assert.equal(checkedGitUrl('https://nds.example.org/git/nd000001.git', api), 'https://nds.example.org/git/nd000001.git');
  });
  for (const hostile of ['--upload-pack=touch /tmp/x;', 'ext::sh -c touch% /tmp/x', 'file:///home/ada/secret.git', 'https://elsewhere.example/git/nd000001.git', 'http://nds.example.org/git/nd000001.git', 'https://ada:pw@nds.example.org/git/x.git', 42]) {
    it(`is not ${JSON.stringify(hostile)}`, () => {
      assert.throws(() => checkedGitUrl(hostile, api), /not an http\(s\) URL of https:\/\/nds\.example\.org/);
    });
  }
});
