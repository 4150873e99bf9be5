/**
 * The Python client reads a server's answer up to a bound (64 MiB of JSON, 64 KiB of a refusal): a broken or
 * hostile server answering 300 MiB (generated as it is sent) must not be taken into a training job's memory.
 * Past the bound the client closes the connection and raises `NdsApiError` `answer_too_large`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MiB, startHostileServer, type HostileServer } from './hostile-answers.js';
import { runPython } from './support.js';

const HUGE = 300 * MiB;

/** Runs `call` on a Client of `url` and prints the `NdsApiError` it raised as JSON (or `ok` and the result). */
function script(url: string, call: string): string {
  return [
    'import json',
    'from nds_client.client import Client, NdsApiError',
    `client = Client(${JSON.stringify(url)}, retries=0)`,
    'try:',
    `    result = ${call}`,
    '    print(json.dumps({"ok": result}))',
    'except NdsApiError as e:',
    '    print(json.dumps({"status": e.status, "code": e.code, "message": str(e)}))',
    '',
  ].join('\n');
}

async function stoppedEarly(hostile: HostileServer, at: string, most: number): Promise<void> {
  const seen = await hostile.closed(at);
  assert.equal(seen.finished, false, `the client read all ${seen.bytes} bytes of ${at}`);
  assert.ok(seen.bytes < most, `${seen.bytes} bytes of ${at} went out before the client closed (expected under ${most})`);
}

describe('the Python client and answers past their bound', { timeout: 120_000 }, () => {
  let hostile: HostileServer;
  let ordinary: HostileServer;
  before(async () => {
    hostile = await startHostileServer({
      '/recordings': { status: 200, bytes: HUGE },
      '/datasets/nd000001/events': { status: 404, bytes: HUGE },
    });
    ordinary = await startHostileServer({}, { '/recordings': { recordings: [{ path: 'sub-01/eeg/a.edf' }], next_cursor: null } });
  });
  after(async () => {
    await hostile.close();
    await ordinary.close();
  });

  it('list_recordings: a page past 64 MiB raises answer_too_large, read no further', async () => {
    const run = await runPython(script(hostile.url, 'client.list_recordings()'));
    assert.equal(run.code, 0, run.stderr);
    const error = JSON.parse(run.stdout) as { status: number; code: string; message: string };
    assert.equal(error.code, 'answer_too_large');
    assert.equal(error.status, 200);
    assert.match(error.message, /the answer to \/recordings is larger than 64 MiB/);
    await stoppedEarly(hostile, '/recordings', 128 * MiB);
  });

  it('a refusal past 64 KiB raises answer_too_large with its status', async () => {
    const run = await runPython(script(hostile.url, 'client.events("nd000001", "a.edf")'));
    assert.equal(run.code, 0, run.stderr);
    const error = JSON.parse(run.stdout) as { status: number; code: string; message: string };
    assert.equal(error.code, 'answer_too_large');
    assert.equal(error.status, 404);
    assert.match(error.message, /the answer to \/datasets\/nd000001\/events is larger than 64 KiB/);
    await stoppedEarly(hostile, '/datasets/nd000001/events', 32 * MiB);
  });

  it('reads an answer of ordinary size as before', async () => {
    const run = await runPython(script(ordinary.url, 'client.list_recordings()'));
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { ok: [{ path: 'sub-01/eeg/a.edf' }] });
  });
});
