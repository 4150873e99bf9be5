/**
 * Annotation text in a committed `_events.tsv` and in the export, read by the readers BIDS users train with.
 * BIDS tables may quote cells, and pandas' `read_csv(sep="\t")` and Python's `csv` module take a cell that
 * opens with `"` to run to the next `"`, tabs and line breaks included: an annotator's label `"` once hid every
 * row after it (the other people's marks) from them, while nds's own reader still saw the rows.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';
import { uploadedDataset } from './support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, ...(body !== undefined && { body: JSON.stringify(body) }) });

/** The rows of a tab-separated table as Python's csv module reads it (what pandas' readers do with quotes). */
function pythonCsvRows(text: string): string[][] {
  const script = 'import csv, json, sys\nprint(json.dumps(list(csv.reader(sys.stdin, delimiter="\\t"))))';
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { input: text, encoding: 'utf8' })) as string[][];
}

describe('annotation text in events tables', () => {
  let server: TestServer;
  let owner: TestAccount;
  let annotator: TestAccount;
  let id: string;
  let recording: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    annotator = await createAccount(server);
    ({ id, recording } = await uploadedDataset(server, owner));
    await json(await owner.api(`/datasets/${id}/members/${annotator.user.username}`, send('PUT', { role: 'annotator' })), 201);
  });
  after(() => server.close());

  it('hides no row from a reader that honours quotes, whatever the labels hold', async () => {
    await json(await owner.api(`/datasets/${id}/annotations`, send('POST', [0.2, 0.3, 0.4].map((onset) => ({ path: recording, onset, duration: 0.05, label: 'seizure' })))), 201);
    // The annotator's marks before them: a lone quote, a quoted word, a tab and a line break.
    const hostile = ['"', '"eyes" closed', 'a\tb', 'line\r\nbreak'];
    await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', hostile.map((_, i) => ({ path: recording, onset: 0.01 * (i + 1), duration: 0, label: `mark ${i}` })))), 201);
    // The API refuses a tab or a line break in a label now; labels stored before may hold them.
    for (const [i, label] of hostile.entries()) await server.deps.db.updateTable('annotations').set({ label }).where('dataset_id', '=', id).where('label', '=', `mark ${i}`).execute();

    const exported = await (await owner.api(`/datasets/${id}/annotations/export?path=${encodeURIComponent(recording)}`)).text();
    const committed = await json(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'marks' })), 201);
    const eventsPath = (committed.files as string[]).find((f) => f.endsWith('_events.tsv'))!;
    const manifest = await json(await owner.api(`/datasets/${id}/manifest?version=${committed.version}`), 200);
    const entry = (manifest.files as Array<{ path: string; sha256: string }>).find((f) => f.path === eventsPath)!;
    const events = (await server.deps.objects.readAll(`${id}/objects/${entry.sha256}`))!.toString('utf8');

    for (const [what, text] of [['the committed events file', events], ['the export', exported]] as const) {
      const lines = text.trimEnd().split('\n');
      const rows = pythonCsvRows(text);
      assert.equal(rows.length, lines.length, `${what}: Python's csv reads ${rows.length} rows of the ${lines.length} written:\n${text}`);
      const labelColumn = rows[0]!.indexOf('trial_type');
      const labels = rows.slice(1).map((r) => r[labelColumn]);
      assert.equal(labels.filter((l) => l === 'seizure').length, 3, what);
      assert.ok(labels.includes("'"), `${what}: a double quote is written as a single one`);
      assert.ok(labels.includes("'eyes' closed"), what);
      assert.ok(labels.includes('a b') && labels.includes('line break'), what);
      for (const r of rows) assert.equal(r.length, rows[0]!.length, `${what}: every row has the header's columns`);
    }
  });
});
