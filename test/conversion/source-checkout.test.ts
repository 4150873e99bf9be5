/**
 * The conversion's checkout of a dataset's source (`src/conversion/source-checkout.ts`): it fetches only what
 * `source_repo` may name, pinned to the address it checked, and leaves a tree of folders and regular files,
 * whatever the repository holds and whatever the machine's git configuration says.
 */
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/core/config.js';
import type { DatasetRow } from '../../src/db/datasets-tables.js';
import type { Deps } from '../../src/deps.js';
import { checkoutSource, SourceError, type CheckoutDeps } from '../../src/conversion/source-checkout.js';
import { convertOneRecording, openSource } from '../../src/conversion/recording-conversions.js';
import { createHash } from 'node:crypto';
import { createLogger } from '../../src/core/log.js';
import { Metrics } from '../../src/core/metrics.js';
import { FileObjectStore } from '../../src/objects/file-object-store.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { systemClock } from '../../src/core/clock.js';
import { sourceMirrorDir } from '../../src/conversion/zarr-ready.js';
import { datasetRow } from '../support/datasets.js';
import { gitIn, hostedSource, hostRepository, startRepositoryNode, type RepositoryNode } from './support.js';

const SHA = 'ab'.repeat(32);

/** Every entry under `dir` that is not a folder or a regular file. */
function oddEntries(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const s = lstatSync(path.join(dir, r));
    if (s.isDirectory()) out.push(...oddEntries(dir, r));
    else if (!s.isFile()) out.push(r);
  }
  return out;
}

function row(id: string, sourceRepo: string | null): DatasetRow {
  return { ...datasetRow({ id, name: id, owner_id: 1, source_repo: sourceRepo }), created_at: new Date(), updated_at: new Date() } as unknown as DatasetRow;
}

describe('the checkout of a source repository', () => {
  let tmp: string;
  let deps: CheckoutDeps;
  let outside: string;
  let node: RepositoryNode;
  /** Where the checkout finds the node holding a hosted repository: no database here, the test's node. */
  const holder = async () => node.url;

  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-checkout-'));
    outside = path.join(tmp, 'outside.txt');
    writeFileSync(outside, 'a file of the server');
    const config = loadConfig({ DATA_DIR: path.join(tmp, 'data'), PUBLIC_URL: 'http://nds.test:8080', SOURCE_REPO_HOSTS: 'github.com,repo.example,127.0.0.1', OBJECT_SIGNING_SECRET: 'the secret every node shares' });
    // The repositories live on another node's disk: the worker's own DATA_DIR has none.
    node = await startRepositoryNode(path.join(tmp, 'holder-git'), config);
    deps = { config: { ...config, gitDir: path.join(tmp, 'holder-git') }, objects: undefined as unknown as Deps['objects'], db: undefined as unknown as Deps['db'], clock: systemClock };
  });
  after(async () => {
    await node.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** A repository committed with `files` (content, or `{ link }` for a symlink), hosted for dataset `id`. */
  function hosted(id: string, files: Record<string, string | { link: string }>): string {
    const work = mkdtempSync(path.join(tmp, 'work-'));
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      if (typeof content === 'string') writeFileSync(path.join(work, rel), content);
      else symlinkSync(content.link, path.join(work, rel));
    }
    gitIn(work, 'init', '-q');
    gitIn(work, 'add', '-A');
    gitIn(work, 'commit', '-q', '-m', 'tree');
    return hostRepository(deps.config.gitDir, id, work);
  }

  it('keeps no link: git-annex links become pointers, every other link an empty file it refuses to read', async () => {
    hosted('nd000001', {
      'dataset_description.json': '{"Name": "links"}',
      'sub-01/eeg/sub-01_eeg.vhdr': 'header',
      'sub-01/eeg/sub-01_eeg.eeg': { link: outside },
      'sub-01/eeg/sub-01_channels.tsv': { link: 'sub-01_eeg.vhdr' },
      'sub-01/eeg/annexed.edf': { link: `../../.git/annex/objects/Xx/Yy/SHA256E-s10--${SHA}.edf/SHA256E-s10--${SHA}.edf` },
      'sub-02': { link: path.dirname(outside) },
    });
    const checkout = await checkoutSource(deps, row('nd000001', hostedSource), 'HEAD', { holder });
    try {
      assert.deepEqual(oddEntries(checkout.dir), []);
      assert.equal(readFileSync(path.join(checkout.dir, 'sub-01/eeg/sub-01_eeg.vhdr'), 'utf8'), 'header');
      assert.equal(readFileSync(path.join(checkout.dir, 'sub-01/eeg/annexed.edf'), 'utf8'), `version https://git-lfs.github.com/spec/v1\noid sha256:${SHA}\nsize 0\n`);
      for (const rel of ['sub-01/eeg/sub-01_eeg.eeg', 'sub-01/eeg/sub-01_channels.tsv', 'sub-02']) assert.equal(readFileSync(path.join(checkout.dir, rel), 'utf8'), '', rel);
      assert.deepEqual(
        [...checkout.refused].sort(),
        ['sub-01/eeg/sub-01_channels.tsv', 'sub-01/eeg/sub-01_eeg.eeg', 'sub-02'].map((rel) => [
          rel,
          `${rel} is a symbolic link in the repository: nds reads only regular files of a dataset (git-annex links excepted). Commit the file itself.`,
        ]),
      );
    } finally {
      await checkout.cleanup();
    }
  });

  it('fetches a hosted repository over HTTP from the node that holds it, with a fetch credential of that dataset, never from a folder', async () => {
    hosted('nd000007', { 'dataset_description.json': '{"Name": "elsewhere"}' });
    const sent = node.authorizations.length;
    const checkout = await checkoutSource(deps, row('nd000007', hostedSource), 'HEAD', { holder });
    try {
      assert.equal(readFileSync(path.join(checkout.dir, 'dataset_description.json'), 'utf8'), '{"Name": "elsewhere"}');
      const used = node.authorizations.slice(sent);
      assert.ok(used.length > 0 && used.every((a) => a?.startsWith('Bearer ndsfetch.nd000007.')), `credentials sent: ${used.join(', ')}`);
      // The mirror keeps no credential: it was in git's environment only.
      assert.doesNotMatch(readFileSync(path.join(sourceMirrorDir(deps.config.dataDir, 'nd000007'), 'config'), 'utf8'), /ndsfetch|extraHeader/i);
    } finally {
      await checkout.cleanup();
    }
  });

  it("writes a large file without its content, gives it its content when a conversion opens it, and takes it back after the recording", async () => {
    // A worker taking one recording's task writes that recording's data, not the dataset's (decision 0030).
    const one = `one ${'x'.repeat(200_000)}`;
    const two = `two ${'y'.repeat(200_000)}`;
    hosted('nd000009', {
      'dataset_description.json': '{"Name": "large"}',
      'task-rest_eeg.json': '{"TaskName": "rest"}',
      'sub-01/eeg/sub-01_task-rest_eeg.edf': one,
      'sub-02/eeg/sub-02_task-rest_eeg.edf': two,
    });
    const checkout = await checkoutSource(deps, row('nd000009', hostedSource), 'HEAD', { holder });
    try {
      const size = (rel: string) => statSync(path.join(checkout.dir, rel)).size;
      assert.equal(readFileSync(path.join(checkout.dir, 'task-rest_eeg.json'), 'utf8'), '{"TaskName": "rest"}');
      assert.deepEqual([size('sub-01/eeg/sub-01_task-rest_eeg.edf'), size('sub-02/eeg/sub-02_task-rest_eeg.edf')], [0, 0]);
      const { tree } = await openSource(checkout);
      assert.equal(await tree.readText(path.join(checkout.dir, 'sub-01/eeg/sub-01_task-rest_eeg.edf')), one);
      assert.equal(size('sub-02/eeg/sub-02_task-rest_eeg.edf'), 0, "the other recording's data stays in the mirror");
      await checkout.release();
      assert.equal(size('sub-01/eeg/sub-01_task-rest_eeg.edf'), 0, 'released after the recording');
      assert.equal(await tree.readText(path.join(checkout.dir, 'sub-02/eeg/sub-02_task-rest_eeg.edf')), two);
    } finally {
      await checkout.cleanup();
    }
  });

  it("converts a git-lfs recording from the folder store's content object without copying it or hashing it: its digest is the object's key", async () => {
    const objects = new FileObjectStore(path.join(tmp, 'objects-lfs'));
    const edf = (seed: number) =>
      Buffer.from(writeEdf({ recordDuration: 1, records: 4, signals: [{ label: 'Cz', samplesPerRecord: 100, samples: Int16Array.from({ length: 400 }, (_, i) => (i * seed) % 300) }] }));
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const pointer = (digest: string) => `version https://git-lfs.github.com/spec/v1\noid sha256:${digest}\nsize 10\n`;
    const good = edf(1);
    const named = edf(2);
    await objects.put(`nd000011/objects/${sha(good)}`, good);
    // An object that does not hold what its key names, which the store never lets in (decision 0034): here it
    // shows that the conversion takes the digest from the key and never reads the object for it.
    await objects.put(`nd000011/objects/${sha(named)}`, edf(3));
    hosted('nd000011', {
      'dataset_description.json': '{"Name": "lfs"}',
      'sub-01/eeg/sub-01_task-rest_eeg.edf': pointer(sha(good)),
      'sub-02/eeg/sub-02_task-rest_eeg.edf': pointer(sha(named)),
    });
    const checkout = await checkoutSource({ ...deps, objects }, row('nd000011', hostedSource), 'HEAD', { holder });
    const source = await openSource(checkout);
    const convertDeps = { objects, clock: systemClock, log: createLogger('silent'), metrics: new Metrics() };
    const sourceFiles = async (zarr: string) =>
      (JSON.parse((await objects.readAll(`nd000011/zarr/${zarr}/zarr.json`))!.toString('utf8')) as { attributes: { source: { files: Array<{ path: string; sha256: string }> } } }).attributes.source.files;
    try {
      // The data file is the content object itself (one inode), not a copy of it.
      await checkout.materialize(['sub-01/eeg/sub-01_task-rest_eeg.edf']);
      assert.equal(statSync(path.join(checkout.dir, 'sub-01/eeg/sub-01_task-rest_eeg.edf')).ino, statSync(objects.pathOf(`nd000011/objects/${sha(good)}`)).ino);
      assert.equal(checkout.contentSha256('sub-01/eeg/sub-01_task-rest_eeg.edf'), sha(good));
      await checkout.release();
      assert.equal(checkout.contentSha256('sub-01/eeg/sub-01_task-rest_eeg.edf'), undefined, 'released');
      const converted = await convertOneRecording(convertDeps, 'nd000011', source, { path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', zarr: 'sub-01/eeg/sub-01_task-rest_eeg.zarr', modality: 'eeg' });
      assert.ok(converted.store, JSON.stringify(converted.failure));
      assert.deepEqual(await sourceFiles('sub-01/eeg/sub-01_task-rest_eeg.zarr'), [{ path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', sha256: sha(good) }]);
      const other = await convertOneRecording(convertDeps, 'nd000011', source, { path: 'sub-02/eeg/sub-02_task-rest_eeg.edf', zarr: 'sub-02/eeg/sub-02_task-rest_eeg.zarr', modality: 'eeg' });
      assert.ok(other.store, JSON.stringify(other.failure));
      assert.deepEqual(await sourceFiles('sub-02/eeg/sub-02_task-rest_eeg.zarr'), [{ path: 'sub-02/eeg/sub-02_task-rest_eeg.edf', sha256: sha(named) }]);
      // The content objects are as they were; the tree holds pointers again.
      assert.ok((await objects.readAll(`nd000011/objects/${sha(good)}`))!.equals(good));
      assert.equal(readFileSync(path.join(checkout.dir, 'sub-01/eeg/sub-01_task-rest_eeg.edf'), 'utf8'), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha(good)}\nsize 0\n`);
    } finally {
      await checkout.cleanup();
      await objects.close();
    }
  });

  it('checks out a commit its mirror has already without asking the node that holds the repository', async () => {
    hosted('nd000010', { 'dataset_description.json': '{"Name": "again"}' });
    const first = await checkoutSource(deps, row('nd000010', hostedSource), 'HEAD', { holder });
    await first.cleanup();
    const sent = node.authorizations.length;
    // A task's checkout names the job's planned commit: a commit id names one tree forever.
    const again = await checkoutSource(deps, row('nd000010', hostedSource), first.commit, { holder });
    try {
      assert.equal(again.commit, first.commit);
      assert.equal(node.authorizations.length, sent, 'no request to the node');
      assert.equal(readFileSync(path.join(again.dir, 'dataset_description.json'), 'utf8'), '{"Name": "again"}');
    } finally {
      await again.cleanup();
    }
  });

  it('a hosted repository whose node does not answer fails with a reason that names no node', async () => {
    hosted('nd000008', { 'dataset_description.json': '{}' });
    const gone = async () => 'http://127.0.0.1:9';
    await assert.rejects(
      checkoutSource(deps, row('nd000008', hostedSource), 'HEAD', { holder: gone }),
      (err) => err instanceof SourceError && /could not be fetched from the node that holds it/.test(err.message) && !err.message.includes('127.0.0.1'),
    );
  });

  it("extracts a tree of git-lfs pointers with git-lfs's required filter in the machine's git configuration", async () => {
    // What Debian's git-lfs package writes into /etc/gitconfig; the pointer's object is on no lfs server.
    const system = path.join(tmp, 'gitconfig-system');
    writeFileSync(system, '[filter "lfs"]\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true\n\tclean = git-lfs clean -- %f\n');
    const saved = process.env.GIT_CONFIG_SYSTEM;
    process.env.GIT_CONFIG_SYSTEM = system;
    const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${SHA}\nsize 10\n`;
    try {
      hosted('nd000002', { '.gitattributes': '*.edf filter=lfs diff=lfs merge=lfs -text\n', 'sub-01/eeg/sub-01_eeg.edf': pointer });
      const checkout = await checkoutSource(deps, row('nd000002', hostedSource), 'HEAD', { holder });
      try {
        assert.equal(readFileSync(path.join(checkout.dir, 'sub-01/eeg/sub-01_eeg.edf'), 'utf8'), pointer);
      } finally {
        await checkout.cleanup();
      }
    } finally {
      if (saved === undefined) delete process.env.GIT_CONFIG_SYSTEM;
      else process.env.GIT_CONFIG_SYSTEM = saved;
    }
  });

  it("refuses a path, a file:// URL and another dataset's repository, with the reason, before fetching anything", async () => {
    const victim = hosted('nd000003', { 'dataset_description.json': '{"Name": "victim"}' });
    for (const [value, reason] of [
      [victim, /The source repository is refused: a path is not a source repository/],
      [`file://${victim}`, /The source repository is refused: a file:\/\/ URL/],
      ['http://nds.test:8080/git/nd000003.git', /The source repository is refused: names a repository of this server that is not the dataset's own/],
    ] as const) {
      await assert.rejects(checkoutSource(deps as Deps, row('nd000004', value), 'HEAD'), (err) => err instanceof SourceError && reason.test(err.message) && !err.message.includes(deps.config.dataDir), value);
      assert.equal(existsSync(sourceMirrorDir(deps.config.dataDir, 'nd000004')), false, `${value} was fetched`);
    }
  });

  describe('from a remote host', () => {
    let listener: Server;
    let port: number;
    let connections = 0;
    before(async () => {
      listener = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      port = (listener.address() as { port: number }).port;
    });
    after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    it('refuses a host that resolves to a loopback or private address before any connection opens', async () => {
      const before = connections;
      for (const [host, answer] of [['repo.example', '127.0.0.1'], ['repo.example', '10.0.0.1'], ['127.0.0.1', '127.0.0.1']] as const) {
        const lookup = async () => [{ address: answer, family: 4 }];
        await assert.rejects(
          checkoutSource(deps as Deps, row('nd000005', `https://${host}:${port}/o/n.git`), 'HEAD', { lookup }),
          (err) => err instanceof SourceError && /is not a public address/.test(err.message),
        );
      }
      await assert.rejects(checkoutSource(deps as Deps, row('nd000005', `http://127.0.0.1:${port}/o/n.git`), 'HEAD'), (err) => err instanceof SourceError && /only https/.test(err.message));
      assert.equal(connections, before, 'a connection was opened');
    });

    it('connects to the address it checked, not to what DNS says later (an allow-listed loopback server)', async () => {
      const config = { ...deps.config, sourceRepoAllowPrivate: ['127.0.0.1/32'] };
      const before = connections;
      // repo.example is in no DNS: git reaches the server only through the pinned address.
      const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
      await assert.rejects(
        checkoutSource({ ...deps, config } as Deps, row('nd000006', `https://repo.example:${port}/o/n.git`), 'HEAD', { lookup }),
        (err) => err instanceof SourceError && /could not be fetched: fatal: unable to access 'https:\/\/repo\.example/.test(err.message),
      );
      assert.ok(connections > before, 'git did not connect to the pinned address');
    });
  });
});
