/**
 * The file name of an annotation export (`Content-Disposition`). A recording's path is whatever the dataset's files
 * are called (a manifest path or a pushed file may hold `"` and `;`), and the export named the download after it
 * as it was: a dataset's owner could name a recording so that the header carried parameters of their choosing,
 * such as a `filename*`, which browsers prefer to `filename` (RFC 6266 section 4.3), and every reader who exported
 * that recording's annotations saved `evil.html`, whose text (the labels) an annotator wrote.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo } from '../recordings/support.js';
import { sineRecording } from '../mcp/support.js';

const STEM = `sub-01_task-a";filename*=UTF-8''evil%2Ehtml;x="`;
const HOSTILE = `sub-01/eeg/${STEM}_eeg.edf`;

/** The parameters of a `Content-Disposition`, by lower-cased name, as a browser reads them (quoted strings unquoted). */
function dispositionParameters(header: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^=;\s]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]*)/g;
  for (const m of header.matchAll(re)) params.set(m[1]!.toLowerCase(), m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2]!.trim());
  return params;
}

describe('the annotation export of a recording with a hostile name', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let repo: string;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    repo = makeRepo([{ bytes: sineRecording().edf, to: HOSTILE }]);
    id = await convertedDataset(server, owner.user.id, repo, 'public');
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it("is named after the recording's events file, exactly, with no parameter the path put in the header", async () => {
    const made = await owner.api(`/datasets/${id}/annotations`, { method: 'POST', body: JSON.stringify({ path: HOSTILE, onset: 1, duration: 0, label: '<script>alert(document.domain)</script>' }) });
    assert.equal(made.status, 201, await made.text());
    const res = await fetch(`${server.url}/datasets/${id}/annotations/export?path=${encodeURIComponent(HOSTILE)}`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const disposition = res.headers.get('content-disposition') ?? '';
    assert.match(disposition, /^attachment;/);
    const params = dispositionParameters(disposition);
    assert.deepEqual([...params.keys()].sort(), ['filename', 'filename*'], disposition);
    // The name browsers save: the exact events file name, percent-decoded from `filename*`.
    assert.equal(decodeURIComponent(params.get('filename*')!.replace(/^UTF-8''/, '')), `${STEM}_events.tsv`, disposition);
    // The fallback of older clients: safe ASCII characters only.
    assert.match(params.get('filename')!, /^[A-Za-z0-9._-]+_events\.tsv$/, disposition);
  });
});
