/**
 * `nds serve` starts the server in a child process with settings read only at process start (glibc's
 * MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_, V8's --v8-pool-size; decision 0015), and that launcher passes
 * signals on and ends as the server ends. Read through /proc: Linux only, as CI is.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNds, type CliRun } from '../support/cli.js';
import { childrenOf, ended } from '../support/processes.js';
import { freePort } from '../support/test-server.js';

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const answers = async (url: string) => fetch(`${url}/healthz`).then((r) => r.ok, () => false);

describe('nds serve runs the server in a child process with memory settings', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  let work: string;
  let env: Record<string, string>;
  let url: string;
  const running: CliRun[] = [];
  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-serve-launcher-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = { DATA_DIR: path.join(work, 'data'), PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'info' };
  });
  after(async () => {
    for (const run of running) run.child.kill('SIGKILL');
    await rm(work, { recursive: true, force: true });
  });

  const serve = async (extra: Record<string, string> = {}) => {
    const run = startNds(['serve'], { ...env, ...extra });
    running.push(run);
    await run.stderrMatch(/nds is listening/, 60_000);
    return run;
  };

  it('starts the server with the allocator settings and one V8 helper thread, and stops it gracefully on SIGTERM', async () => {
    const run = await serve();
    const launcher = run.child.pid!;
    const [server, ...more] = childrenOf(launcher);
    assert.ok(server !== undefined && more.length === 0, `one server process under the launcher: ${[server, ...more]}`);
    const environ = readFileSync(`/proc/${server}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes('MALLOC_ARENA_MAX=2'), 'MALLOC_ARENA_MAX=2');
    assert.ok(environ.includes('MALLOC_MMAP_THRESHOLD_=131072'), 'MALLOC_MMAP_THRESHOLD_=131072');
    assert.ok(readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0').includes('--v8-pool-size=1'));
    assert.ok(await answers(url));

    run.child.kill('SIGTERM');
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"msg":"shutting down"/, 'the server got the signal and shut down');
    assert.ok(ended(server), 'the server process ended with the launcher');
  });

  it('keeps settings the caller gave', async () => {
    const run = await serve({ MALLOC_ARENA_MAX: '4', NODE_OPTIONS: '--v8-pool-size=2' });
    const [server] = childrenOf(run.child.pid!);
    assert.ok(readFileSync(`/proc/${server}/environ`, 'utf8').split('\0').includes('MALLOC_ARENA_MAX=4'));
    assert.ok(!readFileSync(`/proc/${server}/cmdline`, 'utf8').includes('--v8-pool-size=1'));
    run.child.kill('SIGINT');
    assert.equal((await run.done).code, 0);
  });

  it('stops the server, freeing its port, when the launcher is killed outright', async () => {
    const run = await serve();
    const [server] = childrenOf(run.child.pid!);
    run.child.kill('SIGKILL');
    await run.done;
    await until('the server process ended', () => ended(server!));
    await until('the port is free', async () => !(await answers(url)));
  });

  it('runs the server in the first process with NDS_SERVE_LAUNCHER=off, and under a debugger', async () => {
    const settings: Array<Record<string, string>> = [{ NDS_SERVE_LAUNCHER: 'off' }, { NODE_OPTIONS: '--inspect=127.0.0.1:0' }];
    for (const extra of settings) {
      const run = await serve(extra);
      assert.deepEqual(childrenOf(run.child.pid!), [], JSON.stringify(extra));
      assert.ok(await answers(url));
      run.child.kill('SIGTERM');
      assert.equal((await run.done).code, 0);
    }
  });

  it("ends with the server's exit code when the server cannot start", async () => {
    for (const launcher of ['on', 'off']) {
      const result = await startNds(['serve'], { ...env, PORT: 'not-a-port', NDS_SERVE_LAUNCHER: launcher }).done;
      assert.equal(result.code, 1, `${launcher}: ${result.stderr}`);
      assert.match(result.stderr, /PORT/, launcher);
    }
    assert.ok(existsSync(env.DATA_DIR!));
  });
});
