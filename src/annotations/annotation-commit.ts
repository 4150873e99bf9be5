/**
 * `POST /datasets/:id/annotations/commit` (decision 0028): writes every recording's annotations into its
 * `_events.tsv` as a new version of the dataset, keeping the rows the file had, or those of the events file it
 * inherited (and replacing those an earlier commit wrote), with the message at the top of the BIDS `CHANGES` file. The new version converts as any new
 * version does, so the marks reach `GET /datasets/:id/events` and `POST /windows`. Maintainers, the owner and
 * admins. A dataset whose source is its hosted repository gets the files as a commit on `main` (made on the
 * node holding it), a version of that commit and the conversion a push gets; one whose source is a repository
 * elsewhere takes its changes by push there: it is refused, with the export.
 */
import { posix } from 'node:path';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { sha256Hex } from '../core/secrets.js';
import { convertNewVersion } from '../conversion/convert-new-version.js';
import { datasetFor } from '../datasets/dataset-access.js';
import { contentKey, type ManifestEntry } from '../datasets/manifest.js';
import { createVersion, findVersion, listVersions, readManifest } from '../datasets/versions.js';
import { hostedHead, moveMain, readHostedText, refuseLargeText, writeHostedCommit } from '../datasets/hosted-commit.js';
import { HOSTED_SOURCE } from '../datasets/source-repo.js';
import { createVersionFromCommit, refuseOversizedGitFiles, repositoryHeldElsewhere, reserveForCommitOn } from '../datasets/version-from-commit.js';
import { contentGrantKey, recordStoredBytes, reserveStorage } from '../datasets/storage-quota.js';
import { UPLOAD_URL_TTL_S } from '../datasets/uploads.js';
import { afterPush } from '../conversion/after-push.js';
import { parseBidsName } from '../formats/bids/bids-name.js';
import { applicableFiles, type DirectoryLister } from '../formats/bids/sidecar-files.js';
import { parseTsv } from '../formats/bids/tsv-table.js';
import { UnsupportedFormatError } from '../formats/conversion-errors.js';
import { annotatedPaths, listAnnotationRows } from './annotation-queries.js';
import { mergedEventsTsv } from './annotation-tsv.js';

export interface CommitOutcome {
  version: string;
  /** The files written, by path: each recording's `_events.tsv` and `CHANGES`. */
  files: string[];
  annotations: number;
  /** The commit made on `main`, for a dataset whose source is its hosted repository. */
  commit?: string;
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

/** What a commit reads and writes: the files of the dataset as it stands, and the new files to make its next version from. */
interface CommitSource {
  paths: string[];
  readText(path: string): Promise<string | undefined>;
}

/** The annotated recordings' events files and `CHANGES` as they become, by path. */
async function annotatedFiles(deps: Deps, datasetId: string, source: CommitSource, version: string, message: string, author: string): Promise<{ files: Map<string, string>; annotations: number }> {
  const paths = await annotatedPaths(deps.db, datasetId);
  if (paths.length === 0) throw new NdsError('conflict', { message: `${datasetId} has no annotations to commit.` });
  const files = new Map<string, string>();
  let annotations = 0;
  // The events a recording has now: its own file, or else the one it inherits from higher up the tree (BIDS
  // uses only the lowest applicable TSV). The recording's own file written below would hide an inherited one,
  // so that file's rows are carried into it.
  // The lowest applicable file is the recording's own when it has one.
  const lister = manifestLister(source.paths);
  for (const path of paths) {
    const rows = await listAnnotationRows(deps.db, datasetId, path);
    const eventsPath = eventsPathOf(path);
    const current = (await applicableFiles(lister, path, 'events', '.tsv')).at(-1);
    const existing = current === undefined ? undefined : await source.readText(current);
    const merged = mergedEventsTsv(existing === undefined ? undefined : eventsTable(existing, current!), rows);
    if (current !== eventsPath || existing !== merged) files.set(eventsPath, merged);
    annotations += rows.length;
  }
  if (files.size === 0) throw new NdsError('version_unchanged', { message: `The events files of ${datasetId} hold these annotations already; no version was made.` });
  files.set('CHANGES', changesText(await source.readText('CHANGES'), version, deps.clock.now().toISOString().slice(0, 10), message.trim(), author));
  return { files, annotations };
}

/**
 * The NODE_URL of the node that must make the commit, when it is another (the dataset's hosted repository is
 * held there); undefined when this node makes it. The caller's right to commit is checked first, so a request
 * that may not commit is answered here and never forwarded.
 */
export async function commitMadeElsewhere(deps: Deps, user: User, datasetId: string): Promise<string | undefined> {
  const { dataset } = await datasetFor(deps.db, datasetId, user, 'maintain');
  return dataset.source_repo === HOSTED_SOURCE ? repositoryHeldElsewhere(deps, dataset.id) : undefined;
}

/**
 * Commits the dataset's annotations as its next version, with `message` (its lines: a form's `\r\n` is taken as
 * `\n`) at the top of `CHANGES` and, for a hosted repository, as the commit's message.
 */
export async function commitAnnotations(deps: Deps, user: User, datasetId: string, text: string): Promise<CommitOutcome> {
  const message = text.replace(/\r\n/g, '\n');
  const { dataset } = await datasetFor(deps.db, datasetId, user, 'maintain');
  if (dataset.source_repo === HOSTED_SOURCE) return commitIntoHostedRepository(deps, user, datasetId, message);
  if (dataset.source_repo) {
    throw new NdsError('conflict', {
      message: `${datasetId} takes its changes from the git repository ${dataset.source_repo}: export each recording's annotations (GET /datasets/${datasetId}/annotations/export) into its _events.tsv and push there.`,
    });
  }
  const latest = await findVersion(deps.db, datasetId, undefined);
  const manifest = await readManifest(deps, latest);
  const byPath = new Map<string, ManifestEntry>(manifest.map((e) => [e.path, e]));
  const readText = async (path: string) => {
    const entry = byPath.get(path);
    if (!entry) return undefined;
    refuseLargeText(path, entry.size);
    const bytes = await deps.objects.readAll(contentKey(datasetId, entry.sha256));
    if (!bytes) throw new Error(`content of ${path} in ${datasetId} ${latest.version} is missing from the object store`);
    return bytes.toString('utf8');
  };
  const version = nextPatch(latest.version);
  const { files, annotations } = await annotatedFiles(deps, datasetId, { paths: [...byPath.keys()], readText }, version, message, user.username);
  const written = writtenFiles(files);
  // The files a commit writes are content of the dataset like an upload's, and count against its owner's quota.
  const expiresAt = new Date(deps.clock.now().getTime() + UPLOAD_URL_TTL_S * 1000);
  await reserveStorage(deps, datasetId, written.map((f) => ({ key: contentGrantKey(f.sha256), bytes: f.size })), { expiresAt });
  for (const { path, size, sha256, bytes } of written) {
    await deps.objects.put(contentKey(datasetId, sha256), bytes, { contentType: path.endsWith('.tsv') ? 'text/tab-separated-values' : 'text/plain', sha256 });
    await recordStoredBytes(deps, datasetId, contentGrantKey(sha256), size);
    byPath.set(path, { path, size, sha256 });
  }
  await createVersion(deps, datasetId, { version, manifest: [...byPath.values()], createdBy: user.id, madeBy: user });
  await convertNewVersion(deps, dataset, version);
  return { version, files: [...files.keys()].sort(), annotations };
}

/**
 * The same commit for a dataset whose source is its hosted repository (on the node that holds it: the route
 * forwards there): a commit on `main` by the user, a version made from it, and the conversion a push gets.
 */
function commitIntoHostedRepository(deps: Deps, user: User, datasetId: string, message: string): Promise<CommitOutcome> {
  // One commit of a dataset at a time on its holder (every node forwards there): the next one reads the head
  // and the versions the previous one left, so two never take the same version number. A push in between is
  // caught by the compare-and-swap of `main`.
  const previous = commitsUnderWay.get(datasetId) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(() => hostedCommit(deps, user, datasetId, message));
  const settled = mine.catch(() => undefined);
  commitsUnderWay.set(datasetId, settled);
  void settled.then(() => {
    if (commitsUnderWay.get(datasetId) === settled) commitsUnderWay.delete(datasetId);
  });
  return mine;
}

const commitsUnderWay = new Map<string, Promise<unknown>>();

async function hostedCommit(deps: Deps, user: User, datasetId: string, message: string): Promise<CommitOutcome> {
  // Asked again once this commit's turn has come: the caller may have been removed while it waited.
  await datasetFor(deps.db, datasetId, user, 'maintain');
  const head = await hostedHead(deps, datasetId);
  // Before `main` moves: its version would be refused, and no file over the bound is read.
  refuseOversizedGitFiles([...head.files.values()], head.commit, deps.config.maxGitFileBytes);
  const latest = (await listVersions(deps.db, datasetId))[0];
  const version = latest ? nextPatch(latest.version) : '1.0.0';
  const source: CommitSource = { paths: [...head.files.keys()], readText: (path) => readHostedText(deps, datasetId, head, path) };
  const { files, annotations } = await annotatedFiles(deps, datasetId, source, version, message, user.username);
  // The room of the version is granted before `main` moves: a refusal then leaves the repository as it was.
  await reserveForCommitOn(deps, datasetId, head.dir, head.commit, writtenFiles(files));
  const host = new URL(deps.config.publicUrl).hostname;
  const commit = await writeHostedCommit(head, {
    files,
    message: `${message.trim()}\n\nAnnotations committed by ${user.username} (version ${version}).`,
    // Never the account's address: the history of a public dataset is public.
    author: { name: user.username, email: `${user.username}@users.noreply.${host}` },
    date: deps.clock.now(),
  });
  // `main` moves as the version's last step, under the dataset's row lock and after the author's right is asked
  // there: the author's removal lands before it (the version is refused and `main` stays) or waits for it.
  await createVersionFromCommit(deps, datasetId, { version, commit, createdBy: user.id, madeBy: user, lastUnderLock: () => moveMain(head, datasetId, commit) });
  await afterPush(deps, datasetId, head.dir, head.commit);
  return { version, files: [...files.keys()].sort(), annotations, commit };
}

/** The files a commit writes, as manifest entries with their bytes (each hashed once). */
function writtenFiles(files: Map<string, string>): Array<ManifestEntry & { bytes: Buffer }> {
  return [...files].map(([path, text]) => {
    const bytes = Buffer.from(text, 'utf8');
    return { path, size: bytes.length, sha256: sha256Hex(bytes), bytes };
  });
}

/** An events file to merge into, refused (`conflict`, in words) past the bounds of a sidecar table. */
function eventsTable(text: string, path: string): ReturnType<typeof parseTsv> {
  try {
    return parseTsv(text, path);
  } catch (err) {
    if (err instanceof UnsupportedFormatError) throw new NdsError('conflict', { message: `${err.message} Annotations are not merged into it.`, cause: err });
    throw err;
  }
}
