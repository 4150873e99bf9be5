/**
 * `POST /datasets/:id/annotations/commit` (decision 0028): writes every recording's annotations into its
 * `_events.tsv` as a new version of the dataset, keeping the rows the file had, or those of the events file it
 * inherited (and replacing those an earlier commit wrote), with the message at the top of the BIDS `CHANGES` file. The new version converts as any new
 * version does, so the marks reach `GET /datasets/:id/events` and `POST /windows`. Maintainers, the owner and
 * admins. A dataset whose source is a git repository takes its changes by push: it is refused, with the export.
 */
import { posix } from 'node:path';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { sha256Hex } from '../core/secrets.js';
import { convertNewVersion } from '../conversion/convert-new-version.js';
import { datasetFor } from '../datasets/dataset-access.js';
import { contentKey, type ManifestEntry } from '../datasets/manifest.js';
import { createVersion, findVersion, readManifest } from '../datasets/versions.js';
import { parseBidsName } from '../formats/bids/bids-name.js';
import { applicableFiles, type DirectoryLister } from '../formats/bids/sidecar-files.js';
import { parseTsv } from '../formats/bids/tsv-table.js';
import { annotatedPaths, listAnnotationRows } from './annotation-queries.js';
import { mergedEventsTsv } from './annotation-tsv.js';

export interface CommitOutcome {
  version: string;
  /** The files written, by path: each recording's `_events.tsv` and `CHANGES`. */
  files: string[];
  annotations: number;
}

/** `sub-01/eeg/sub-01_task-rest_eeg.edf` → `sub-01/eeg/sub-01_task-rest_events.tsv`: the recording's own events file. */
export function eventsPathOf(recordingPath: string): string {
  const name = parseBidsName(posix.basename(recordingPath));
  if (!name) throw new NdsError('conflict', { message: `${recordingPath} has no BIDS name; its events file cannot be named.` });
  const stem = name.stem.slice(0, name.stem.length - name.suffix.length - 1);
  return posix.join(posix.dirname(recordingPath), `${stem}_events.tsv`);
}

/** Lists a version's files folder by folder, as the BIDS inheritance look-up reads a tree. */
function manifestLister(paths: Iterable<string>): DirectoryLister {
  const byFolder = new Map<string, string[]>();
  for (const path of paths) {
    const dir = posix.dirname(path) === '.' ? '' : posix.dirname(path);
    byFolder.set(dir, [...(byFolder.get(dir) ?? []), posix.basename(path)]);
  }
  return async (dir) => byFolder.get(dir) ?? [];
}

/** The next patch version: 1.2.3 → 1.2.4; a pre-release 1.3.0-rc.1 → 1.3.0. */
export function nextPatch(version: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)(-[^+]*)?/.exec(version);
  if (!m) return '1.0.0';
  return m[4] ? `${m[1]}.${m[2]}.${m[3]}` : `${m[1]}.${m[2]}.${Number(m[3]) + 1}`;
}

/** `CHANGES` (BIDS): the new version's entry first, then what the file said. */
function changesText(previous: string | undefined, version: string, date: string, message: string, author: string): string {
  const entry = [`${version} ${date}`, ...message.split('\n').map((line, i) => `${i === 0 ? '  - ' : '    '}${line}`), `  - Annotations committed by ${author}.`].join('\n');
  return previous ? `${entry}\n\n${previous.replace(/^\s+/, '')}` : `${entry}\n`;
}

export async function commitAnnotations(deps: Deps, user: User, datasetId: string, message: string): Promise<CommitOutcome> {
  const { dataset } = await datasetFor(deps.db, datasetId, user, 'maintain');
  if (dataset.source_repo) {
    throw new NdsError('conflict', {
      message: `${datasetId} takes its changes from its git repository: export each recording's annotations (GET /datasets/${datasetId}/annotations/export) into its _events.tsv and push.`,
    });
  }
  const latest = await findVersion(deps.db, datasetId, undefined);
  const manifest = await readManifest(deps, latest);
  const byPath = new Map<string, ManifestEntry>(manifest.map((e) => [e.path, e]));
  const readText = async (path: string) => {
    const entry = byPath.get(path);
    if (!entry) return undefined;
    const bytes = await deps.objects.readAll(contentKey(datasetId, entry.sha256));
    if (!bytes) throw new Error(`content of ${path} in ${datasetId} ${latest.version} is missing from the object store`);
    return bytes.toString('utf8');
  };
  const write = async (path: string, text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const sha256 = sha256Hex(bytes);
    await deps.objects.put(contentKey(datasetId, sha256), bytes, { contentType: 'text/tab-separated-values', sha256 });
    byPath.set(path, { path, size: bytes.length, sha256 });
  };

  const paths = await annotatedPaths(deps.db, datasetId);
  if (paths.length === 0) throw new NdsError('conflict', { message: `${datasetId} has no annotations to commit.` });
  const files: string[] = [];
  let count = 0;
  // The events a recording has now: its own file, or else the one it inherits from higher up the tree (BIDS
  // uses only the lowest applicable TSV). The recording's own file written below would hide an inherited one,
  // so that file's rows are carried into it.
  const lister = manifestLister([...byPath.keys()]);
  for (const path of paths) {
    const rows = await listAnnotationRows(deps.db, datasetId, path);
    const eventsPath = eventsPathOf(path);
    const current = byPath.has(eventsPath) ? eventsPath : (await applicableFiles(lister, path, 'events', '.tsv')).at(-1);
    const existing = current === undefined ? undefined : await readText(current);
    await write(eventsPath, mergedEventsTsv(existing === undefined ? undefined : parseTsv(existing), rows));
    files.push(eventsPath);
    count += rows.length;
  }
  const version = nextPatch(latest.version);
  await write('CHANGES', changesText(await readText('CHANGES'), version, deps.clock.now().toISOString().slice(0, 10), message.trim(), user.username));
  files.push('CHANGES');
  await createVersion(deps, datasetId, { version, manifest: [...byPath.values()], createdBy: user.id });
  await convertNewVersion(deps, dataset, version);
  return { version, files: files.sort(), annotations: count };
}
