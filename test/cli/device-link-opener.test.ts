/**
 * `nds auth login` hands the server's `verification_uri_complete` to the system's opener (`xdg-open`, macOS
 * `open`). A server the user names (or anyone on the path of an http NDS_API_URL) may answer a `file:` URL or
 * another scheme a desktop hands to a local program: only an http(s) link of the server's own origin is opened.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isOwnPage } from '../../src/cli/device-sign-in.js';
import { nds } from '../support/cli.js';

describe('the link `nds auth login` opens', { timeout: 60_000 }, () => {
  let hostile: http.Server;
  let url: string;
  let tmp: string;
  let opened: string;
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-opener-'));
    opened = path.join(tmp, 'opened');
    const bin = path.join(tmp, 'bin');
    mkdirSync(bin);
    // Stands for the desktop's opener: records what it was asked to open.
    for (const name of ['xdg-open', 'open']) {
      writeFileSync(path.join(bin, name), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${opened}'\n`);
      chmodSync(path.join(bin, name), 0o755);
    }
    hostile = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/auth/device/start') {
        res.end(JSON.stringify({ device_code: 'd', user_code: 'ABCD-EFGH', verification_uri: `${url}/device`, verification_uri_complete: 'file:///etc/passwd', interval: 1, expires_in: 30 }));
      } else {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: 'access_denied', message: 'refused' }));
      }
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => hostile.close(() => r()));
    rmSync(tmp, { recursive: true, force: true });
  });

  it('opens nothing but a link on the server it signs in to', async () => {
    const r = await nds(['auth', 'login'], {
      NDS_API_URL: url,
      NDS_NO_BROWSER: '0',
      DISPLAY: ':0',
      PATH: `${path.join(tmp, 'bin')}:${process.env.PATH}`,
      XDG_CONFIG_HOME: tmp,
    });
    assert.match(r.stderr, /ABCD-EFGH|refused/, r.stderr);
    // The opener was started before the first poll, a second before the command ended.
    const links = existsSync(opened) ? readFileSync(opened, 'utf8').trim().split('\n') : [];
    for (const link of links) assert.ok(link.startsWith(`${url}/`), `the opener was handed ${JSON.stringify(link)}`);
  });
});

describe('the links `nds auth login` opens', () => {
  const api = 'https://nds.example.org';
  it('are http(s) pages of the server\'s own origin', () => {
    assert.equal(isOwnPage('https://nds.example.org/device?code=ABCD-EFGH', api), true);
  });
  for (const link of ['file:///etc/passwd', 'smb://evil.example/share', 'x-custom-handler:run', 'https://evil.example/device', 'http://nds.example.org/device', '-a Terminal', '']) {
    it(`are not ${JSON.stringify(link)}`, () => assert.equal(isOwnPage(link, api), false));
  }
});
