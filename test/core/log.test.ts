import assert from 'node:assert/strict';
import { hostname } from 'node:os';
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
