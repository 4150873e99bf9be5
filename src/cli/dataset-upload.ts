/**
 * `nds datasets upload <id> <folder>`: hashes every file (streamed), asks the server for presigned URLs a
 * batch at a time, PUTs what the store does not have yet (several at once, retried with backoff), and
 * finishes by creating a version. Re-running after an interruption sends only what is missing: the server
 * answers `present` for content it already holds. Hashing the next batch overlaps the uploads of the current
 * one. Where the dataset has a hosted repository (or `--git` asks for one), the folder is committed there with
 * pointers (`dataset-git.ts`) and the version is made from that commit; otherwise from the manifest.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { normalizeManifest, serializeManifest } from '../datasets/manifest.js';
import { bidsFolderOnDisk, checkBidsFolder, type BidsCheck } from '../formats/bids/check-bids-folder.js';
import { ApiError, type ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { checkedGitUrl, commitAndPush } from './dataset-git.js';
import { HashCache } from './hash-cache.js';
import { hashFile, putFile, TransferError, withRetries } from './http-transfer.js';
import type { Progress } from './transfer-progress.js';
import { TaskPool } from './task-pool.js';
import { uploadInParts } from './multipart-upload.js';
import { UploadState } from './upload-state.js';

export interface LocalFile {
  path: string;
  abs: string;
  size: number;
  sha256: string;
}

export interface UploadOptions {
  version?: string;
  concurrency: number;
  retries: number;
  createVersion: boolean;
  /** `auto`: commit when the dataset has a hosted repository; `always`: create one if needed; `never`. */
  git: 'auto' | 'always' | 'never';
  progress: Progress;
  /** Remembered hashes of local files; without it every file is read to be hashed. */
  hashCache?: HashCache;
  /** Called after each file's content is stored (or found present). */
  onFile?: (file: LocalFile, outcome: 'uploaded' | 'present') => void;
  /** Called after each part of a file sent in parts is stored. */
  onPart?: (file: string, part: number, count: number) => void;
  /** Unfinished uploads in parts, remembered between runs; without it they are kept in memory only. */
  uploadState?: UploadState;
  /** Upload even when the BIDS check finds errors. */
  force?: boolean;
  /** Hash and compare with the latest version, then stop: nothing is uploaded and no version is made. */
  dryRun?: boolean;
  /** Shown the BIDS check's findings before anything is sent. */
  onCheck?: (check: BidsCheck) => void;
  /**
   * Asked before a version without files the latest version has is made; throws (or returns false) to stop.
   * Without it such an upload is refused.
   */
  confirmRemoval?: (removed: string[], latestVersion: string) => Promise<boolean>;
}

/** What this folder changes against the latest version. */
export interface ManifestDiff {
  /** The version compared with; null when the dataset has none yet. */
  latest_version: string | null;
  added: string[];
  changed: string[];
  removed: string[];
}

export interface UploadSummary {
  dataset_id: string;
  files: number;
  bytes: number;
  uploaded: number;
  uploaded_bytes: number;
  /** Bytes of files sent in parts that the server held already from an interrupted run (not sent again). */
  resumed_bytes: number;
  present: number;
  /** Files read to be hashed (the others' hashes were remembered from an earlier run). */
  hashed: number;
  version: string | null;
  /** The commit pushed to the dataset's repository (or found there unchanged); null without git. */
  commit: string | null;
  git_note: string | null;
  /** The BIDS check's findings. */
  check: { errors: number; warnings: number };
  /** Against the latest version (computed when a version is to be made, and on a dry run). */
  diff: ManifestDiff | null;
  /** True when the folder is exactly the latest version: nothing was sent and no version was made. */
  unchanged: boolean;
  dry_run: boolean;
  /** The id the conversion of the new version will record (`zarr_source_commit`), for `--wait`. */
  expected_source_commit: string | null;
}

type Target = { path: string; status: 'present' } | { path: string; status: 'upload'; url: string; headers: Record<string, string> };

interface DatasetRepository {
  source_repo: string | null;
  git_url: string;
  hosted_repo: boolean;
}

/**
 * Parts of one file in flight at most: a lost connection costs the parts in flight (about half of each on
 * average), so 4 parts of 8 MiB lose some 16 MiB a cut (bench/upload.ts --cuts).
 */
const PARTS_IN_FLIGHT = 4;
const BATCH = 64;
const BATCH_BYTES = 64 * 2 ** 20;
const SKIP = new Set(['.git', '.datalad', '.DS_Store']);

/** Regular files under `root`, as `/`-separated relative paths in sorted order; symlinks and `.git` are skipped. */
interface ListedFile {
  path: string;
  abs: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

/** `listFiles`, with a sentence instead of `ENOENT ... scandir` when the folder is not there. */
export async function listFolder(folder: string): Promise<ListedFile[]> {
  let info;
  try {
    info = await stat(folder);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError(`There is no folder ${folder}; give the path of the dataset's root folder (the one with dataset_description.json).`);
    if (code === 'EACCES') throw new CliError(`${folder} cannot be read (permission denied).`);
    throw err;
  }
  if (!info.isDirectory()) throw new CliError(`${folder} is a file, not a folder; give the dataset's root folder (the one with dataset_description.json).`);
  try {
    return await listFiles(folder);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EACCES' || e.code === 'EPERM') throw new CliError(`${e.path ?? folder} cannot be read (permission denied).`);
    throw err;
  }
}

export async function listFiles(root: string): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  const walk = async (dir: string, rel: string) => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (SKIP.has(e.name) || e.name.endsWith('.nds-partial')) continue;
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(abs, r);
      else if (e.isFile()) {
        const s = await lstat(abs);
        out.push({ path: r, abs, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
      }
    }
  };
  await walk(root, '');
  return out;
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  // The first failure stops the other workers from starting new items.
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      try {
        while (!failed && next < items.length) await fn(items[next++]);
      } catch (err) {
        failed = true;
        throw err;
      }
    }),
  );
}

export async function uploadFolder(api: ApiClient, datasetId: string, folder: string, options: UploadOptions): Promise<UploadSummary> {
  const listed = await listFolder(folder);
  if (listed.length === 0) throw new CliError(`${folder} holds no files`);
  const check = await checkBidsFolder(bidsFolderOnDisk(folder, listed));
  options.onCheck?.(check);
  if (check.errors.length > 0 && !options.force) {
    throw new CliError(`nothing was sent: ${folder} is not a BIDS dataset nds can take (${check.errors.length} ${check.errors.length === 1 ? 'error' : 'errors'} above). Fix them, or pass --force to upload it as it is.`);
  }
  const total = listed.reduce((s, f) => s + f.size, 0);
  const id = encodeURIComponent(datasetId);
  // Fail before hashing a terabyte when the dataset is not there or not ours.
  const dataset = await api.request<DatasetRepository>(`/datasets/${id}`);
  const summary: UploadSummary = {
    dataset_id: datasetId, files: listed.length, bytes: total, uploaded: 0, uploaded_bytes: 0, resumed_bytes: 0, present: 0, hashed: 0, version: null, commit: null, git_note: null,
    check: { errors: check.errors.length, warnings: check.warnings.length }, diff: null, unchanged: false, dry_run: !!options.dryRun, expected_source_commit: null,
  };
  const useGit = options.git === 'always' || (options.git === 'auto' && dataset.hosted_repo);
  if (useGit && dataset.source_repo && !dataset.hosted_repo) {
    throw new CliError(`${datasetId} takes its files from ${dataset.source_repo}; push there with git, or pass --no-git to upload content only`);
  }
  if (!useGit && options.git === 'auto' && dataset.source_repo) summary.git_note = `not committed: the repository ${dataset.source_repo} is not hosted by nds`;

  const localPaths = new Set(listed.map((f) => f.path));
  // A commit of this upload writes its own `.gitattributes` (dataset-git.ts) where the folder has none: the
  // latest version's copy of it is nds's, not a file the folder lost.
  const latest = options.createVersion || options.dryRun ? withoutGeneratedAttributes(await latestManifest(api, id), useGit && !localPaths.has('.gitattributes')) : null;
  const removed = latest ? latest.files.filter((f) => !localPaths.has(f.path)).map((f) => f.path) : [];
  // Hashes computed ahead of the pipeline (dry run, or a folder that may be the latest version unchanged).
  let known: Map<string, LocalFile> | undefined;
  const sameOutline = latest !== null && removed.length === 0 && latest.files.length === listed.length && listed.every((f) => latest.bySize.get(f.path) === f.size);
  if (options.dryRun || sameOutline) {
    options.progress.start(total);
    const all = await hashAll(listed, options, summary);
    options.progress.stop();
    known = new Map(all.map((f) => [f.path, f]));
    summary.diff = diffAgainst(all, latest);
    if (options.dryRun) return summary;
    if (summary.diff.added.length === 0 && summary.diff.changed.length === 0) {
      summary.unchanged = true;
      summary.version = latest!.version;
      return summary;
    }
  } else if (latest) {
    summary.diff = { latest_version: latest.version, added: listed.filter((f) => !latest.bySize.has(f.path)).map((f) => f.path), changed: [], removed };
  }
  if (options.createVersion && latest && removed.length > 0) {
    const go = options.confirmRemoval ? await options.confirmRemoval(removed, latest.version) : false;
    if (!go) throw new CliError(`nothing was sent: this folder lacks ${removed.length} ${removed.length === 1 ? 'file' : 'files'} that version ${latest.version} has, and the new version would not have them. Pass --yes to make it anyway.`);
  }
  const manifest: LocalFile[] = [];
  options.progress.start(total);

  // Two files hashed at a time: each read holds a 1 MiB buffer, so a batch of 64 at once would cost 64 MiB.
  const hashBatch = async (batch: typeof listed): Promise<LocalFile[]> => {
    const hashed: LocalFile[] = new Array(batch.length);
    let i = 0;
    await mapLimit(batch, 2, async (f) => {
      const slot = i++;
      const already = known?.get(f.path);
      if (already) {
        hashed[slot] = already;
        return;
      }
      const remembered = options.hashCache?.get(f.abs, f);
      if (remembered) {
        hashed[slot] = { path: f.path, abs: f.abs, size: f.size, sha256: remembered };
        return;
      }
      const h = await hashFile(f.abs);
      summary.hashed++;
      if (h.size !== f.size) throw new CliError(`${f.path} changed while it was read; run the upload again`);
      options.hashCache?.set(f.abs, { size: f.size, mtimeMs: f.mtimeMs, ino: f.ino, sha256: h.sha256 });
      hashed[slot] = { path: f.path, abs: f.abs, size: f.size, sha256: h.sha256 };
    });
    return hashed;
  };
  let savedAt = performance.now();
  const saveHashesNowAndThen = async () => {
    if (performance.now() - savedAt < 5000) return;
    savedAt = performance.now();
    await options.hashCache?.save();
  };
  // Files from the server's threshold on go up in parts, one file at a time with its parts in parallel; the
  // others in batches, several files at a time.
  const threshold = await partThreshold(api, id);
  const large = listed.filter((f) => f.size >= threshold);
  const batches = batchesOf(listed.filter((f) => f.size < threshold));
  // Uploads of one batch go on while the next is hashed and asked for: one pool across batches.
  const uploads = new TaskPool(options.concurrency);
  const seen = new Set<string>();
  let pending = batches.length > 0 ? hashBatch(batches[0]) : Promise.resolve([]);
  for (let b = 0; b < batches.length; b++) {
    const hashed = await pending;
    if (b + 1 < batches.length) {
      pending = hashBatch(batches[b + 1]);
      pending.catch(() => undefined);
    }
    manifest.push(...hashed);
    await queueBatch(api, id, hashed, options, summary, uploads, seen);
    uploads.throwIfFailed();
    await saveHashesNowAndThen();
  }
  await uploads.drain();
  const uploadState = options.uploadState ?? (await UploadState.open(undefined));
  for (const f of large) {
    const remembered = known?.get(f.path)?.sha256 ?? options.hashCache?.get(f.abs, f);
    const sent = await uploadInParts(api, datasetId, f, {
      concurrency: Math.min(options.concurrency, PARTS_IN_FLIGHT),
      retries: options.retries,
      progress: options.progress,
      state: uploadState,
      hashCache: options.hashCache,
      sha256: remembered,
      onPart: options.onPart && ((part, count) => options.onPart!(f.path, part, count)),
    });
    if (sent.read && !remembered) summary.hashed++;
    const file = { path: f.path, abs: f.abs, size: f.size, sha256: sent.sha256 };
    manifest.push(file);
    if (sent.outcome === 'present') summary.present++;
    else {
      summary.uploaded++;
      summary.uploaded_bytes += sent.sentBytes;
      summary.resumed_bytes += sent.resumedBytes;
    }
    options.onFile?.(file, sent.outcome);
    await saveHashesNowAndThen();
  }

  if (useGit) {
    const me = await api.request<{ username: string; email: string | null }>('/users/me');
    const pushed = await commitAndPush({
      gitUrl: checkedGitUrl(dataset.git_url, api.baseUrl),
      apiKey: api.requireKey(),
      files: manifest,
      message: `nds datasets upload: ${listed.length} files`,
      author: { name: me.username, email: me.email ?? `${me.username}@users.nds` },
      remoteExists: dataset.hosted_repo,
    });
    summary.commit = pushed.commit;
    summary.git_note = pushed.changed ? `pushed ${pushed.pointers} pointers and ${pushed.blobs} text files` : 'the repository already holds this tree';
  }

  if (options.createVersion) {
    const version = options.version ?? (await nextVersion(api, id));
    const body = summary.commit ? { version, commit: summary.commit } : { version, manifest: manifest.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 })) };
    try {
      const created = await api.request<{ version: string }>(`/datasets/${id}/versions`, { method: 'POST', body });
      summary.version = created.version;
    } catch (err) {
      // The latest version changed under us to these very files: nothing to make.
      if (err instanceof ApiError && err.code === 'version_unchanged') {
        summary.unchanged = true;
        summary.version = typeof err.body.latest_version === 'string' ? err.body.latest_version : null;
        options.progress.stop();
        return summary;
      }
      throw err;
    }
    // The conversion of a manifest version records the SHA-1 of the stored manifest; of a pushed tree, its commit.
    summary.expected_source_commit = summary.commit ?? createHash('sha1').update(serializeManifest(normalizeManifest(('manifest' in body && body.manifest) || []))).digest('hex');
  }
  options.progress.stop();
  return summary;
}

/**
 * Batches of at most BATCH files and BATCH_BYTES: the first uploads start once 64 MiB are hashed, not 64
 * files (which may be gigabytes).
 */
function batchesOf<T extends { size: number }>(files: T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const f of files) {
    if (current.length > 0 && (current.length >= BATCH || bytes + f.size > BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(f);
    bytes += f.size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

async function queueBatch(api: ApiClient, id: string, hashed: LocalFile[], options: UploadOptions, summary: UploadSummary, uploads: TaskPool, seen: Set<string>): Promise<void> {
  const ask = async (files: LocalFile[]) =>
    (await api.request<{ files: Target[] }>(`/datasets/${id}/upload-urls`, { method: 'POST', body: { files: files.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 })) } })).files;
  const targets = await ask(hashed);
  // One upload per distinct content; other paths with the same bytes ride along.
  const work: Array<{ file: LocalFile; target: Target }> = [];
  hashed.forEach((file, i) => {
    const target = targets[i];
    if (target.status === 'present' || seen.has(file.sha256)) {
      summary.present++;
      options.progress.skip(file.size);
      options.onFile?.(file, 'present');
      return;
    }
    seen.add(file.sha256);
    work.push({ file, target });
  });
  for (const { file, target } of work) uploads.add(async () => {
    let current = target;
    await withRetries(
      options.retries + 1,
      async (attempt) => {
        // After a refusal the URL may have expired: ask for a fresh one.
        if (attempt > 1) current = (await ask([file]))[0];
        if (current.status === 'present') return;
        let sent = 0;
        try {
          await putFile(current, file.abs, file.size, (n) => {
            sent += n;
            options.progress.advance(n);
          });
        } catch (err) {
          options.progress.advance(-sent);
          if (err instanceof TransferError && err.status === 400) {
            options.hashCache?.forget(file.abs);
            throw new CliError(`${file.path}: the store refused its content (${err.message}); did it change during the upload? Run the upload again to hash it anew.`);
          }
          throw err;
        }
      },
      (err, attempt) => options.progress.log(`retrying ${file.path} (attempt ${attempt + 1}): ${err.message}`),
    ).catch((err: unknown) => {
      if (err instanceof TransferError) throw new CliError(`${file.path}: ${err.message}`);
      throw err;
    });
    summary.uploaded++;
    summary.uploaded_bytes += file.size;
    options.onFile?.(file, 'uploaded');
  });
}

interface LatestManifest {
  version: string;
  files: Array<{ path: string; size: number; sha256: string }>;
  bySize: Map<string, number>;
}

/** The latest version's files, or null when the dataset has no version yet. */
async function latestManifest(api: ApiClient, id: string): Promise<LatestManifest | null> {
  try {
    const m = await api.request<{ version: string; files: Array<{ path: string; size: number; sha256: string }> }>(`/datasets/${id}/manifest`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
    return { version: m.version, files: m.files, bySize: new Map(m.files.map((f) => [f.path, f.size])) };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'version_not_found') return null;
    throw err;
  }
}

function withoutGeneratedAttributes(latest: LatestManifest | null, generated: boolean): LatestManifest | null {
  if (!latest || !generated || !latest.bySize.has('.gitattributes')) return latest;
  const files = latest.files.filter((f) => f.path !== '.gitattributes');
  return { version: latest.version, files, bySize: new Map(files.map((f) => [f.path, f.size])) };
}

export function diffAgainst(local: LocalFile[], latest: LatestManifest | null): ManifestDiff {
  if (!latest) return { latest_version: null, added: local.map((f) => f.path), changed: [], removed: [] };
  const before = new Map(latest.files.map((f) => [f.path, f]));
  const localPaths = new Set(local.map((f) => f.path));
  return {
    latest_version: latest.version,
    added: local.filter((f) => !before.has(f.path)).map((f) => f.path),
    changed: local.filter((f) => {
      const b = before.get(f.path);
      return b !== undefined && (b.sha256 !== f.sha256 || b.size !== f.size);
    }).map((f) => f.path),
    removed: latest.files.filter((f) => !localPaths.has(f.path)).map((f) => f.path),
  };
}

/** Every file's hash (remembered ones from the cache), two files at a time. */
async function hashAll(listed: ListedFile[], options: UploadOptions, summary: UploadSummary): Promise<LocalFile[]> {
  const out: LocalFile[] = new Array(listed.length);
  let i = 0;
  await mapLimit(listed, 2, async (f) => {
    const slot = i++;
    const remembered = options.hashCache?.get(f.abs, f);
    let sha256 = remembered;
    if (!sha256) {
      const h = await hashFile(f.abs);
      summary.hashed++;
      if (h.size !== f.size) throw new CliError(`${f.path} changed while it was read; run the upload again`);
      options.hashCache?.set(f.abs, { size: f.size, mtimeMs: f.mtimeMs, ino: f.ino, sha256: h.sha256 });
      sha256 = h.sha256;
    }
    options.progress.skip(f.size);
    out[slot] = { path: f.path, abs: f.abs, size: f.size, sha256 };
  });
  return out;
}

/** The size from which the server takes files in parts; none (every file whole) from a server without the routes. */
async function partThreshold(api: ApiClient, id: string): Promise<number> {
  try {
    return (await api.request<{ part_threshold: number }>(`/datasets/${id}/multipart-uploads`)).part_threshold;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && err.code !== 'dataset_not_found') return Infinity;
    throw err;
  }
}

/** The patch after the highest version, or 1.0.0 for the first. */
async function nextVersion(api: ApiClient, id: string): Promise<string> {
  const { versions } = await api.request<{ versions: Array<{ version: string }> }>(`/datasets/${id}/versions`);
  if (versions.length === 0) return '1.0.0';
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(versions[0].version);
  if (!m) throw new CliError(`cannot derive the next version from ${versions[0].version}; pass --version`);
  return `${m[1]}.${m[2]}.${Number(m[3]) + 1}`;
}
