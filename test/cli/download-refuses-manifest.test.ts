/**
 * `nds datasets download` refuses a manifest whole, before writing anything, when a path could write into the
 * folder's `.git` (a `core.fsmonitor` there runs a command at the next git command, nds's own included), or
 * when two paths would be one file on macOS or Windows. The server refuses such manifests too; the CLI does
 * not rely on it (an older or untrusted server).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadDataset } from '../../src/cli/dataset-download.js';
import { silentProgress } from '../../src/cli/transfer-progress.js';
import { closeAgents } from '../../src/cli/http-transfer.js';

const evil = Buffer.from('[core]\n\tfsmonitor = "touch /tmp/pwned-by-nds-manifest; false"\n');
const sha = createHash('sha256').update(evil).digest('hex');

let dir: string;
let server: Server;
let endpoint: string;
let served = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-download-refuses-'));
  server = createServer((_req, res) => {
    served++;
    res.end(evil);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}/objects/`;
});
after(async () => {
  closeAgents();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** An API that answers the manifest given and download credentials for the local object server. */
function apiWith(paths: string[]) {
  return {
    async request(path: string) {
      if (path.endsWith('/download-credentials')) return { token: 't', endpoint, expires_at: new Date(Date.now() + 3600_000).toISOString() };
      return { version: '1.0.0', files: paths.map((p) => ({ path: p, size: evil.length, sha256: sha })) };
    },
  };
}

describe('nds datasets download refuses a manifest', () => {
  for (const [name, paths, why] of [
    ['into the folder\'s .git', ['README', '.git/config'], /".git\/config" is inside a \.git folder/],
    ['into .git as Windows spells it', ['.GIT./config'], /inside a \.git folder/],
    ['of two paths one file on macOS or Windows', ['sub-01/A.tsv', 'sub-01/a.tsv'], /differs from "sub-01\/A.tsv" only in case or Unicode form/],
    ['of a file that is also a folder', ['sub-01', 'sub-01/x.tsv'], /"sub-01": a file, and the folder of "sub-01\/x.tsv"/],
  ] as const) {
    it(`${name}, writing nothing`, async () => {
      const folder = join(dir, name.replace(/\W+/g, '-'));
      await mkdir(join(folder, '.git'), { recursive: true });
      const original = '[core]\n\trepositoryformatversion = 0\n';
      await writeFile(join(folder, '.git', 'config'), original);
      const before = served;
      await assert.rejects(downloadDataset(apiWith([...paths]) as never, 'nd000001', folder, { concurrency: 1, retries: 0, progress: silentProgress }), (err: Error) => {
        assert.match(err.message, /^refusing the manifest: /);
        assert.match(err.message, why);
        return true;
      });
      assert.equal(served, before, 'no object was fetched');
      assert.equal(await readFile(join(folder, '.git', 'config'), 'utf8'), original);
      assert.deepEqual(await readdir(folder), ['.git']);
    });
  }
});
