/**
 * `/metrics` without METRICS_TOKEN behind the shortest nginx configuration (`proxy_pass http://127.0.0.1:<port>;`,
 * nginx's defaults for every header: no `X-Forwarded-For`, `Host: 127.0.0.1:<port>`). Every stranger's request
 * then arrives from loopback, naming this machine: the service's port answers `/metrics` to nobody without the
 * token (decision 0058), and a local scrape goes to METRICS_PORT, where no proxy points. Debian's nginx, as
 * test/support/nginx.ts uses it, but with nginx's defaults.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../support/nginx.js';
import { freePort, startTestServer, type TestServer } from '../support/test-server.js';

const nginxBinary = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p));

describe('/metrics without METRICS_TOKEN behind nginx with its default proxy headers', { skip: nginxBinary ? false : 'nginx is not installed' }, () => {
  let server: TestServer;
  let nginx: ChildProcess;
  let dir: string;
  let publicUrl: string;

  before(async () => {
    server = await startTestServer({ env: { METRICS_PORT: '0' } });
    assert.equal(server.config.metricsToken, undefined);
    dir = await mkdtemp(path.join(os.tmpdir(), 'nds-metrics-nginx-'));
    for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, sub));
    const port = await freePort();
    // The reverse proxy of a thousand tutorials: one proxy_pass, nginx's defaults for every header.
    await writeFile(
      path.join(dir, 'nginx.conf'),
      `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://127.0.0.1:${server.config.port}; }
  }
}
`,
    );
    nginx = spawn(nginxBinary!, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
    publicUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; !(await fetch(`${publicUrl}/healthz`).then((r) => r.ok, () => false)); i++) {
      assert.ok(i < 200, 'nginx did not answer');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    await stopChild(nginx, 'SIGTERM');
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a client of the public address, as it refuses one through an nginx that sets X-Forwarded-For', async () => {
    // A stranger on the internet asks the service's public name; nginx passes the request on.
    const res = await fetch(`${publicUrl}/metrics`, { headers: { host: 'nds.example.org' } });
    const body = await res.text();
    assert.equal(res.status, 403, `the public read the metrics through the proxy:\n${body.split('\n').filter((l) => l.startsWith('nds_')).slice(0, 3).join('\n')}`);
  });

  it('leaves a scrape from this machine to METRICS_PORT', async () => {
    const res = await fetch(`${server.metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^nds_db_pool_max \d+$/m);
  });
});
