import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/core/config.js';

describe('configuration', () => {
  it('works with nothing set: embedded defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.match(c.databaseUrl, /^pglite:.*data\/db$/);
    assert.match(c.objectStoreUrl, /^file:.*data\/objects$/);
    assert.equal(c.publicUrl, 'http://localhost:8080');
    assert.equal(c.serviceDomain, 'localhost');
    assert.equal(c.zarrCacheBaseUrl, 'http://localhost:8080/zarrproxy');
    assert.equal(c.edgeApiBase, 'https://api.cloudflare.com/client/v4');
    assert.equal(c.conversionDispatch, 'local');
    assert.equal(c.serviceWebhookToken, undefined);
  });

  it('fetches source repositories from github.com and public addresses only, unless told otherwise', () => {
    const defaults = loadConfig({});
    assert.deepEqual([defaults.sourceRepoHosts, defaults.sourceRepoAllowPrivate], [['github.com'], []]);
    const c = loadConfig({ SOURCE_REPO_HOSTS: 'GitHub.com, git.lab.example ,', SOURCE_REPO_ALLOW_PRIVATE: '10.1.0.0/16, fd00::/8,127.0.0.1' });
    assert.deepEqual(c.sourceRepoHosts, ['github.com', 'git.lab.example']);
    assert.deepEqual(c.sourceRepoAllowPrivate, ['10.1.0.0/16', 'fd00::/8', '127.0.0.1']);
  });

  it('derives SERVICE_DOMAIN and the gateway base from PUBLIC_URL', () => {
    const c = loadConfig({ PUBLIC_URL: 'https://nds.example.org/' });
    assert.equal(c.publicUrl, 'https://nds.example.org');
    assert.equal(c.serviceDomain, 'nds.example.org');
    assert.equal(c.zarrCacheBaseUrl, 'https://nds.example.org/zarrproxy');
  });

  const malformed: Array<[string, string]> = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PUBLIC_URL', 'not a url'],
    ['PUBLIC_URL', 'ftp://x'],
    ['DATABASE_URL', 'mysql://x'],
    ['OBJECT_STORE_URL', 'gs://bucket'],
    ['ZARR_CACHE_BASE_URL', 'zarr.example.org'],
    ['CONVERSION_DISPATCH', 'lambda'],
    ['LOG_LEVEL', 'loud'],
    ['CACHE_REDIS_URL', 'localhost:6379'],
    ['SMTP_URL', 'mail.example.org'],
    ['DEVICE_POLL_INTERVAL_S', '0'],
    ['SOURCE_REPO_HOSTS', 'github.com/org'],
    ['SOURCE_REPO_ALLOW_PRIVATE', '10.0.0.0/33'],
    ['SOURCE_REPO_ALLOW_PRIVATE', 'lan'],
  ];
  for (const [name, value] of malformed) {
    it(`a malformed ${name} (${value}) is refused with its name`, () => {
      assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && err.setting === name && err.message.startsWith(`${name}: `));
    });
  }

  it('runs the gateway on one process per core with PostgreSQL, and on one with PGlite', () => {
    assert.equal(loadConfig({}).gatewayWorkers, 1);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/nds' }).gatewayWorkers, availableParallelism());
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/nds', GATEWAY_WORKERS: '3' }).gatewayWorkers, 3);
    // PGlite is the database of one process: a second worker could not open it.
    assert.throws(() => loadConfig({ GATEWAY_WORKERS: '2' }), (err: unknown) => err instanceof ConfigError && err.setting === 'GATEWAY_WORKERS');
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://db/nds', GATEWAY_WORKERS: '0' }), ConfigError);
  });

  it('github dispatch needs its repository and token', () => {
    assert.throws(() => loadConfig({ CONVERSION_DISPATCH: 'github' }), ConfigError);
    assert.equal(loadConfig({ CONVERSION_DISPATCH: 'github', GITHUB_DISPATCH_REPO: 'org/conv', GITHUB_TOKEN: 't' }).conversionDispatch, 'github');
  });

  it('nds serve stops at start-up with one line naming the malformed setting', () => {
    const r = spawnSync(process.execPath, ['bin/nds.js', 'serve'], { env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim(), 'nds: PORT: expected a whole number, got "eighty"');
  });
});
