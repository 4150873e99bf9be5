/** Datasets converted by the real pipeline (git source → worker → stores → index.json → catalogue), for the recordings tests. */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { repositoryDir } from '../../src/git/repository-dir.js';
import type { TestServer } from '../support/test-server.js';
import { fixtures, gitIn, hostCopy, hostedSource } from '../conversion/support.js';

export { fixtures };

/** A file of the test fixtures placed at a BIDS path; `events` is an `_events.tsv` body written beside it. */
export interface Placed {
  /** A fixture file, relative to test/fixtures; or `bytes`, written as they are. */
  from?: string;
  bytes?: Uint8Array;
  to: string;
  events?: string;
}

/** A git repository holding the fixture files at their BIDS paths (plus whole BIDS trees copied in). */
export function makeRepo(files: Placed[], trees: string[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-rec-repo-'));
  for (const tree of trees) cpSync(path.join(fixtures, tree), dir, { recursive: true });
  if (trees.length === 0) writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'test', BIDSVersion: '1.9.0' }));
  for (const f of files) {
    const target = path.join(dir, f.to);
    mkdirSync(path.dirname(target), { recursive: true });
    if (f.bytes) writeFileSync(target, f.bytes);
    const source = f.from ? path.join(fixtures, f.from) : '';
    if (f.from) cpSync(source, target);
    if (f.from && source.endsWith('.vhdr')) {
      // BrainVision: the header names its data and marker files; keep their original names beside it.
      for (const ext of ['.eeg', '.vmrk']) cpSync(source.replace(/\.vhdr$/, ext), path.join(path.dirname(target), path.basename(source).replace(/\.vhdr$/, ext)));
    }
    if (f.events) writeFileSync(target.replace(/_(eeg|emg|ieeg)\.\w+$/, '_events.tsv'), f.events);
  }
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

let serial = 500;

/** A dataset row owned by `ownerId` whose source is `repo`, converted to the end by the server's worker. */
export async function convertedDataset(server: TestServer, ownerId: number, repo: string, visibility: 'public' | 'private' = 'public'): Promise<string> {
  const id = `nd${String(++serial).padStart(6, '0')}`;
  hostCopy(server.config.gitDir, id, repo);
  await server.deps.db
    .insertInto('datasets')
    .values({ id, name: `Recordings ${id}`, owner_id: ownerId, visibility, source_repo: hostedSource, external_ids: [], latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
    .execute();
  await convertToEnd(server, id);
  return id;
}

/** Pushes `repo`'s new commit to the dataset's hosted repository and converts it to the end, as a push would. */
export async function reconvertedDataset(server: TestServer, id: string, repo: string): Promise<void> {
  gitIn(repo, 'push', '-q', '--force', repositoryDir(server.config.gitDir, id), `HEAD:${gitIn(repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim()}`);
  await convertToEnd(server, id);
}

async function convertToEnd(server: TestServer, id: string): Promise<void> {
  await enqueueConversion(server.deps.db, { datasetId: id, ref: 'HEAD', full: true, reason: 'test' });
  for (const wake of server.deps.hooks.jobQueued) wake();
  await server.worker!.idle();
  const row = await server.deps.db.selectFrom('datasets').select(['zarr_status']).where('id', '=', id).executeTakeFirstOrThrow();
  if (row.zarr_status !== 'ready') throw new Error(`conversion of ${id} ended ${row.zarr_status}`);
}
