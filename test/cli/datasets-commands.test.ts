/**
 * `nds datasets ...` end to end: the real CLI process against a real server, on the folder store and on
 * radosgw. Upload resumes after a kill without re-sending stored content; download verifies every hash.
 */
// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestAccount } from '../support/accounts.js';
import { createAccount } from '../support/accounts.js';
import { ndsAs } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, storeVariants } from '../datasets/support.js';
import { repositoryDir } from '../../src/git/repository-dir.js';

const execFileAsync = promisify(execFile);
/** Where uploads remember file hashes: nowhere, unless a test gives them a cache of its own. */
let hashCache = 'off';

const nds = (server: TestServer, key: string, args: string[]) => ndsAs(server, key, args, { NDS_UPLOAD_HASH_CACHE: hashCache }).done;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const variant of storeVariants) {
  describe(`nds datasets on the ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let tmp: string;
    let src: string;
    let id: string;
    const contents = new Map<string, Buffer>();
    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: s.env });
      owner = await createUploader(server);
      tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-cli-ds-'));
      src = path.join(tmp, 'src');
      for (let i = 0; i < 40; i++) {
        const rel = `sub-${String(i % 4).padStart(2, '0')}/eeg/run-${i}.edf`;
        contents.set(rel, randomBytes(1 << 20));
      }
      contents.set('README', Buffer.from('a small text file\n'));
      contents.set('copy-of-run-0.edf', contents.get('sub-00/eeg/run-0.edf')!);
      for (const [rel, bytes] of contents) {
        mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
        writeFileSync(path.join(src, rel), bytes);
      }
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    const storedContent = async () => {
      const keys: string[] = [];
      for await (const o of server.deps.objects.list(`${id}/objects/`)) keys.push(o.key);
      return keys;
    };

    it('creates a dataset, and lists and shows it', async () => {
      const r = await nds(server, owner.key, ['datasets', 'create', 'CLI dataset', '--description', 'made by the test', '--keyword', 'eeg', 'rest', '--json']);
      assert.equal(r.code, 0, r.stderr);
      id = JSON.parse(r.stdout).id;
      assert.match(id, /^nd\d{6}$/);
      const list = await nds(server, owner.key, ['datasets', 'list', '--mine']);
      assert.match(list.stdout, /^ID\s+NAME\s+OWNER\s+VISIBILITY/);
      assert.match(list.stdout, new RegExp(`${id}\\s+CLI dataset\\s+${owner.user.username}\\s+private`));
      const show = await nds(server, owner.key, ['datasets', 'show', id, '--json']);
      assert.deepEqual(JSON.parse(show.stdout).keywords, ['eeg', 'rest']);
    });

    it('resumes an interrupted upload, sending only what the store does not have yet', async () => {
      const distinct = new Set([...contents.values()].map(sha)).size;
      const upload = ndsAs(server, owner.key, ['datasets', 'upload', id, src, '--force', '--concurrency', '1', '--verbose'], { NDS_UPLOAD_HASH_CACHE: hashCache });
      let progress = '';
      upload.child.stderr!.on('data', (d) => {
        progress += d;
        if ((progress.match(/^uploaded /gm) ?? []).length >= 3) upload.child.kill('SIGKILL');
      });
      const first = await upload.done;
      assert.equal(first.code, null, `the first upload was to be killed midway: ${first.stderr}`);
      // A PUT whose body was all sent before the kill may still be landing in the store.
      await new Promise((r) => setTimeout(r, 500));
      const storedAfterKill = (await storedContent()).length;
      assert.ok(storedAfterKill >= 3 && storedAfterKill < distinct, `stored ${storedAfterKill} of ${distinct}`);
      assert.equal((await server.deps.db.selectFrom('dataset_versions').select('version').where('dataset_id', '=', id).execute()).length, 0);

      const second = await nds(server, owner.key, ['datasets', 'upload', id, src, '--force', '--json']);
      assert.equal(second.code, 0, second.stderr);
      const summary = JSON.parse(second.stdout);
      assert.equal(summary.files, contents.size);
      assert.equal(summary.uploaded, distinct - storedAfterKill);
      assert.equal(summary.present, contents.size - summary.uploaded);
      assert.equal(summary.version, '1.0.0');
      assert.equal((await storedContent()).length, distinct);

      // The same folder again is the latest version: no new version.
      const third = await nds(server, owner.key, ['datasets', 'upload', id, src, '--force']);
      assert.equal(third.code, 0, third.stderr);
      assert.match(third.stderr, /no change: the folder holds exactly the files of version 1\.0\.0; no version was made/);
      // Nothing was sent, so no transfer rate (hashes from the cache once made it "42403.0 MB/s").
      assert.match(third.stderr, /upload \[.*\] 100% [\d.]+\/[\d.]+ MB\n/);
      assert.doesNotMatch(third.stderr, /MB\/s/);
      // One file more makes 1.0.1, sending only that file.
      contents.set('CHANGES', Buffer.from('1.0.1: a note\n'));
      writeFileSync(path.join(src, 'CHANGES'), contents.get('CHANGES')!);
      const fourth = await nds(server, owner.key, ['datasets', 'upload', id, src, '--force']);
      assert.equal(fourth.code, 0, fourth.stderr);
      assert.match(fourth.stderr, /1 uploaded .*42 already stored; version 1\.0\.1 created/);
      assert.match(fourth.stderr, /upload \[.*\] 100% [\d.]+\/[\d.]+ MB, [\d.]+ MB\/s\n/);
    });

    it('shows versions and the manifest', async () => {
      const versions = await nds(server, owner.key, ['datasets', 'versions', id]);
      assert.match(versions.stdout, /^VERSION\s+CREATED_AT\s+FILES\s+SIZE/);
      assert.match(versions.stdout, /1\.0\.1 .* 43 /);
      const manifest = JSON.parse((await nds(server, owner.key, ['datasets', 'manifest', id, '--version', '1.0.1', '--json'])).stdout);
      assert.deepEqual(
        manifest.files.map((f: { path: string; sha256: string }) => [f.path, f.sha256]),
        [...contents].map(([p, b]) => [p, sha(b)]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
      );
    });

    it('downloads every file, verified, and resumes by keeping what is already there', async () => {
      const dest = path.join(tmp, 'down');
      const r = await nds(server, owner.key, ['datasets', 'download', id, dest, '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { dataset_id: id, version: '1.0.1', files: 43, bytes: [...contents.values()].reduce((s, b) => s + b.length, 0), downloaded: 43, kept: 0 });
      for (const [rel, bytes] of contents) assert.ok(readFileSync(path.join(dest, rel)).equals(bytes), rel);
      rmSync(path.join(dest, 'README'));
      const again = JSON.parse((await nds(server, owner.key, ['datasets', 'download', id, dest, '--json'])).stdout);
      assert.deepEqual([again.downloaded, again.kept], [1, 42]);
      const stranger = await createUploader(server);
      const refused = await nds(server, stranger.key, ['datasets', 'download', id, path.join(tmp, 'nope')]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /dataset_not_found/);
    });

    it('fails a download whose stored bytes were tampered with, naming the file', async () => {
      const victim = 'sub-02/eeg/run-6.edf';
      const original = contents.get(victim)!;
      const forged = Buffer.from(original);
      forged[1000] ^= 0xff;
      await server.deps.objects.put(`${id}/objects/${sha(original)}`, forged);
      const dest = path.join(tmp, 'tampered');
      const r = await nds(server, owner.key, ['datasets', 'download', id, dest]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /sub-02\/eeg\/run-6\.edf: content does not match the manifest/);
      assert.ok(!existsSync(path.join(dest, victim)));
      await server.deps.objects.put(`${id}/objects/${sha(original)}`, original);
    });

    it('refuses a manifest whose paths leave the target folder, writing nothing', async () => {
      const bytes = contents.get('README')!;
      const manifest = Buffer.from(JSON.stringify([{ path: '../escaped', size: bytes.length, sha256: sha(bytes) }]));
      await server.deps.objects.put(`${id}/versions/6.6.6/manifest.json`, manifest);
      await server.deps.db.insertInto('dataset_versions').values({ dataset_id: id, version: '6.6.6', created_by: null, source_commit: null, manifest_sha256: sha(manifest), file_count: 1, size_bytes: bytes.length }).execute();
      const dest = path.join(tmp, 'evil', 'inner');
      const r = await nds(server, owner.key, ['datasets', 'download', id, dest, '--version', '6.6.6']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /refusing the manifest: entry "\.\.\/escaped"/);
      assert.ok(!existsSync(path.join(tmp, 'evil', 'escaped')));
    });

    it('remembers hashes between runs, re-reads a changed file, and recovers from a stale remembered hash', async () => {
      const cacheFile = path.join(tmp, 'hash-cache', 'hashes.json');
      hashCache = cacheFile;
      try {
        const run = async (...extra: string[]) => {
          const r = await nds(server, owner.key, ['datasets', 'upload', id, src, '--force', '--no-create-version', '--json', ...extra]);
          return { ...r, summary: r.code === 0 ? JSON.parse(r.stdout) : undefined };
        };
        const first = await run();
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.summary.hashed, contents.size);
        const second = await run();
        assert.equal(second.summary.hashed, 0, 'every hash was remembered');
        assert.equal(second.summary.present, contents.size);

        const changed = 'sub-01/eeg/run-1.edf';
        const bytes = randomBytes(1 << 20);
        writeFileSync(path.join(src, changed), bytes);
        contents.set(changed, bytes);
        const third = await run();
        assert.equal(third.code, 0, third.stderr);
        assert.equal(third.summary.hashed, 1);
        assert.equal(third.summary.uploaded, 1);

        // A remembered hash that no longer matches the bytes: the store refuses them, the entry is forgotten.
        const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as { version: number; entries: Array<[string, { sha256: string }]> };
        const entry = cache.entries.find(([abs]) => abs.endsWith(changed))!;
        entry[1].sha256 = sha(randomBytes(8));
        writeFileSync(cacheFile, JSON.stringify(cache));
        const stale = await nds(server, owner.key, ['datasets', 'upload', id, src, '--force', '--no-create-version', '--json', '--retries', '0']);
        assert.equal(stale.code, 1);
        assert.match(stale.stderr, /run-1\.edf: the store refused its content .*Run the upload again/);
        const recovered = await run();
        assert.equal(recovered.code, 0, recovered.stderr);
        assert.equal(recovered.summary.hashed, 1);
        assert.equal(recovered.summary.uploaded, 0, 'the real content was stored by the third run');
      } finally {
        hashCache = 'off';
      }
    });

    it('commits the folder to the hosted repository with pointers for data and blobs for text, and versions that commit', async () => {
      const made = await nds(server, owner.key, ['datasets', 'create', 'Git dataset', '--json']);
      assert.equal(made.code, 0, made.stderr);
      const gid = JSON.parse(made.stdout).id as string;
      const folder = path.join(tmp, 'git-src');
      const edf = randomBytes(300_000);
      const files: Record<string, Buffer> = {
        'sub-01/eeg/sub-01_task-rest_eeg.edf': edf,
        'dataset_description.json': Buffer.from('{"Name": "Git dataset", "BIDSVersion": "1.9.0"}\n'),
        'participants.tsv': Buffer.from('participant_id\nsub-01\n'),
        README: Buffer.from('first\n'),
      };
      for (const [rel, bytes] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
        writeFileSync(path.join(folder, rel), bytes);
      }
      // Without a hosted repository and without --git, nothing is committed.
      const before = JSON.parse((await nds(server, owner.key, ['datasets', 'show', gid, '--json'])).stdout);
      assert.equal(before.hosted_repo, false);

      const first = await nds(server, owner.key, ['datasets', 'upload', gid, folder, '--force', '--git', '--json']);
      assert.equal(first.code, 0, first.stderr);
      const one = JSON.parse(first.stdout);
      assert.match(one.commit, /^[0-9a-f]{40}$/);
      assert.equal(one.version, '1.0.0');
      const repo = repositoryDir(server.deps.config.gitDir, gid);
      const git = async (...args: string[]) => (await execFileAsync('git', ['--git-dir', repo, ...args])).stdout;
      assert.equal((await git('rev-parse', 'main')).trim(), one.commit);
      assert.equal((await git('rev-parse', 'v1.0.0^{commit}')).trim(), one.commit);
      assert.equal(await git('show', 'main:sub-01/eeg/sub-01_task-rest_eeg.edf'), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha(edf)}\nsize ${edf.length}\n`);
      assert.equal(await git('show', 'main:participants.tsv'), 'participant_id\nsub-01\n');
      assert.equal(await git('show', 'main:README'), 'first\n');
      // git-lfs's filter for the pointers, so that `git lfs pull` in a clone smudges them.
      const attributes = "# Data files are git-lfs pointers to the dataset's content (written by nds datasets upload).\n*.edf filter=lfs diff=lfs merge=lfs -text\n";
      assert.equal(await git('show', 'main:.gitattributes'), attributes);
      const version = await server.deps.db.selectFrom('dataset_versions').select('source_commit').where('dataset_id', '=', gid).where('version', '=', '1.0.0').executeTakeFirstOrThrow();
      assert.equal(version.source_commit, one.commit);
      const manifest = JSON.parse((await nds(server, owner.key, ['datasets', 'manifest', gid, '--json'])).stdout);
      assert.deepEqual(
        manifest.files.map((f: { path: string; sha256: string }) => [f.path, f.sha256]).sort(),
        [...Object.entries(files), ['.gitattributes', Buffer.from(attributes)] as const].map(([rel, bytes]) => [rel, sha(bytes)]).sort(),
      );
      const shown = JSON.parse((await nds(server, owner.key, ['datasets', 'show', gid, '--json'])).stdout);
      assert.equal(shown.hosted_repo, true);
      assert.equal(shown.source_repo, shown.git_url);

      // Now that the repository exists, a plain upload commits on top of main.
      writeFileSync(path.join(folder, 'README'), 'second\n');
      const second = await nds(server, owner.key, ['datasets', 'upload', gid, folder, '--force', '--json']);
      assert.equal(second.code, 0, second.stderr);
      const two = JSON.parse(second.stdout);
      assert.equal(two.version, '1.0.1');
      assert.notEqual(two.commit, one.commit);
      assert.equal((await git('rev-parse', `${two.commit}^`)).trim(), one.commit);
      assert.equal(await git('show', 'main:README'), 'second\n');

      // The same tree again pushes nothing; --no-git skips the repository altogether.
      const third = await nds(server, owner.key, ['datasets', 'upload', gid, folder, '--force', '--no-create-version', '--json']);
      assert.equal(third.code, 0, third.stderr);
      assert.equal(JSON.parse(third.stdout).commit, two.commit);
      assert.match(JSON.parse(third.stdout).git_note, /already holds/);
      const skipped = await nds(server, owner.key, ['datasets', 'upload', gid, folder, '--force', '--no-git', '--no-create-version', '--json']);
      assert.equal(JSON.parse(skipped.stdout).commit, null);
      assert.equal((await git('rev-parse', 'main')).trim(), two.commit);
    });

    it('deletes a dataset through nds admin datasets delete', async () => {
      const admin = await createAccount(server, { role: 'admin' });
      const member = await nds(server, owner.key, ['admin', 'datasets', 'delete', id]);
      assert.equal(member.code, 1);
      assert.match(member.stderr, /admin_required/);
      const r = await nds(server, admin.key, ['admin', 'datasets', 'delete', id, '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).deleted, true);
      assert.deepEqual(await storedContent(), []);
    });
  });
}
