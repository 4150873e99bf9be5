/**
 * Debian's nginx in front of nds processes, as a deployment puts it (docs/deploy.md): a test's or bench's own
 * nginx, with its own configuration, pid file, logs and temporary folders, in the foreground on a free port,
 * round-robin over the upstreams it is given. Every answer says which upstream served it (`X-Upstream`).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Upstream ports of a location other than `/` (`/zarrproxy/` to `nds gateway`, say), by path prefix. */
export type NginxRoutes = Record<string, number[]>;

export interface NginxOptions {
  /**
   * `proxy_request_buffering`: on (nginx's default), a request's body is read whole before it is passed on; off,
   * it streams through as it comes, as many deployments set it for large uploads.
   */
  requestBuffering?: boolean;
}

/**
 * Starts nginx on `port` in `dir`: `/` goes to `upstreams` (API nodes), each prefix of `routes` to its own.
 * Connections to the upstreams are kept alive (HTTP/1.1), request bodies are unbounded (git pushes, uploads
 * through `/objects`), and bodies are buffered as nginx does by default (`options` may turn that off). Resolves
 * once `/healthz` answers through it.
 */
export async function startNginx(dir: string, port: number, upstreams: number[], routes: NginxRoutes = {}, options: NginxOptions = {}): Promise<ChildProcess> {
  const nginx = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p));
  assert.ok(nginx, "nginx is not installed: scripts/ci/setup.sh installs Debian's package");
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, sub), { recursive: true });
  const upstream = (name: string, ports: number[]) => `  upstream ${name} {\n${ports.map((p) => `    server 127.0.0.1:${p};`).join('\n')}\n    keepalive 32;\n  }`;
  const location = (prefix: string, name: string) => `    location ${prefix} {
      proxy_pass http://${name};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering ${options.requestBuffering === false ? 'off' : 'on'};
      add_header X-Upstream $upstream_addr always;
    }`;
  const extra = Object.entries(routes).map(([prefix, ports], i) => ({ prefix, ports, name: `route${i}` }));
  const conf = `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_max_body_size 0;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${upstream('nds', upstreams)}
${extra.map((r) => upstream(r.name, r.ports)).join('\n')}
  server {
    listen 127.0.0.1:${port};
${location('/', 'nds')}
${extra.map((r) => location(r.prefix, r.name)).join('\n')}
  }
}
`;
  await writeFile(path.join(dir, 'nginx.conf'), conf);
  const child = spawn(nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) assert.fail(`nginx exited: ${stderr} ${await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '')}`);
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return child;
    if (Date.now() > deadline) assert.fail(`nginx did not answer within 10 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops a child with `signal` (SIGKILL after 10 s) and waits for it to exit; nothing when it is gone already. */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
