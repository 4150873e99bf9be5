import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/core/log.js';
import { serveWithin } from '../../src/core/request-context.js';

describe('log lines', () => {
  it('name host, pid, program and release on every line, and the request on every line written while serving it, however deep', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const out = new Writable({ write: (c: Buffer, _e, done) => (lines.push(JSON.parse(c.toString())), done()) });
    const log = createLogger('info', out, 'worker');
    log.info('outside');
    await serveWithin({ requestId: 'req-0123456789', route: undefined }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.resolve().then(() => log.warn('deep inside'));
    });
    assert.deepEqual(lines.map((l) => [l.msg, l.requestId, l.kind, l.hostname, l.pid, l.version]), [
      ['outside', undefined, 'worker', hostname(), process.pid, '0.1.0'],
      ['deep inside', 'req-0123456789', 'worker', hostname(), process.pid, '0.1.0'],
    ]);
  });
});

describe('a long-running process with an error nothing handled', () => {
  const logModule = fileURLToPath(new URL('../../src/core/log.ts', import.meta.url));
  /** Runs `body` in a process that installed `exitOnUnhandledErrors`; its exit code and its JSON log lines. */
  const run = (body: string) => {
    const script = `import { createLogger, exitOnUnhandledErrors } from ${JSON.stringify(logModule)};\nexitOnUnhandledErrors(createLogger('info', undefined, 'worker'));\n${body}`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    const lines = child.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; kind: string; err?: { message: string } });
    return { status: child.status, lines };
  };

  it('logs a rejection nobody handled as a fatal JSON line, with the error, and exits 1', () => {
    const { status, lines } = run("Promise.reject(new Error('lost on the way'));");
    assert.equal(status, 1);
    assert.deepEqual(lines.map((l) => [l.level, l.kind, l.err?.message]), [[60, 'worker', 'lost on the way']]);
    assert.match(lines[0]!.msg, /a promise was rejected and nothing handled it: nds stops/);
  });

  it('logs an exception nobody caught the same way', () => {
    const { status, lines } = run("setTimeout(() => { throw new Error('thrown late'); }, 1);");
    assert.equal(status, 1);
    assert.deepEqual(lines.map((l) => [l.level, l.err?.message]), [[60, 'thrown late']]);
    assert.match(lines[0]!.msg, /an exception was thrown and nothing caught it/);
  });
});
