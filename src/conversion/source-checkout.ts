/**
 * The BIDS source of a conversion, as a folder on disk. A git repository is mirrored under
 * `<DATA_DIR>/sources/<id>.git` and the commit extracted with `git archive`; large files stay pointers
 * (git-annex `SHA256E` symlinks, git-lfs pointer files) until a recording needs them, and are then read
 * from the object store (`<id>/objects/<sha256>`), so the disk holds one recording's data at a time.
 * A dataset without a repository is taken from its latest version manifest the same way.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { git, runGit } from '../git/run-git.js';
import { sourceMirrorDir } from './zarr-ready.js';

export interface SourceCheckout {
  /** The extracted tree. */
  dir: string;
  /** 40-hex commit id (for a manifest source: the SHA-1 of the manifest). */
  commit: string;
  /** The mirror, when the source is a git repository (for `git diff`). */
  mirror?: string;
  /** Replaces any pointer among `files` (relative paths) by its content from the object store. */
  materialize(files: string[]): Promise<void>;
  /** Removes materialized content again (keeps the disk to one recording's data). */
  release(files: string[]): Promise<void>;
  cleanup(): Promise<void>;
}

const LFS_HEADER = 'version https://git-lfs.github.com/spec/v1';
const ANNEX_KEY = /SHA256E?-s\d+--([0-9a-f]{64})/;

export class SourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceError';
  }
}

function repoUrl(sourceRepo: string): string {
  return sourceRepo.startsWith('file://') ? new URL(sourceRepo).pathname : sourceRepo;
}

async function mirrorRepository(deps: Deps, dataset: DatasetRow): Promise<string> {
  const mirror = sourceMirrorDir(deps.config.dataDir, dataset.id);
  if (!existsSync(mirror)) {
    await mkdir(path.dirname(mirror), { recursive: true });
    await git(['clone', '--quiet', '--mirror', repoUrl(dataset.source_repo!), mirror]);
  } else {
    await git(['--git-dir', mirror, 'remote', 'set-url', 'origin', repoUrl(dataset.source_repo!)]);
    await git(['--git-dir', mirror, 'fetch', '--quiet', '--prune', 'origin', '+refs/*:refs/*']);
  }
  return mirror;
}

async function resolveCommit(mirror: string, ref: string): Promise<string> {
  for (const candidate of /^[0-9a-f]{40}$/.test(ref) ? [ref] : [`refs/heads/${ref}`, ref, 'HEAD']) {
    const r = await runGit(['--git-dir', mirror, 'rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]);
    if (r.code === 0) return r.stdout.toString().trim();
  }
  throw new SourceError(`the repository has no commit for ${ref}`);
}

function extract(mirror: string, commit: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const archive = spawn('git', ['--git-dir', mirror, 'archive', '--format=tar', commit], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    archive.stderr.on('data', (d) => (err += d));
    tar.stderr.on('data', (d) => (err += d));
    archive.stdout.pipe(tar.stdin);
    let pending = 2;
    const done = (code: number | null) => {
      if (code !== 0) return reject(new SourceError(`extracting ${commit} failed: ${err.trim()}`));
      if (--pending === 0) resolve();
    };
    archive.on('close', done);
    tar.on('close', done);
    archive.on('error', reject);
    tar.on('error', reject);
  });
}

/** The sha256 a pointer file or annex symlink names, or undefined for an ordinary file. */
async function pointerTarget(file: string): Promise<string | undefined> {
  const s = await lstat(file).catch(() => undefined);
  if (!s) return undefined;
  if (s.isSymbolicLink()) return ANNEX_KEY.exec(await readlink(file))?.[1];
  if (!s.isFile() || s.size > 1024) return undefined;
  const handle = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(1024), 0, 1024, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    if (!text.startsWith(LFS_HEADER)) return undefined;
    return /^oid sha256:([0-9a-f]{64})$/m.exec(text)?.[1];
  } finally {
    await handle.close();
  }
}

function checkoutOf(deps: Deps, datasetId: string, dir: string, commit: string, mirror?: string): SourceCheckout {
  const pointers = new Map<string, string>();
  return {
    dir,
    commit,
    mirror,
    async materialize(files) {
      for (const rel of files) {
        const file = path.join(dir, rel);
        const sha = await pointerTarget(file);
        if (!sha) continue;
        const object = await deps.objects.get(`${datasetId}/objects/${sha}`);
        if (!object) throw new SourceError(`the content of ${rel} (sha256 ${sha}) is not in the object store`);
        await rm(file, { force: true });
        const hash = createHash('sha256');
        object.body.on('data', (chunk: Buffer) => hash.update(chunk));
        await pipeline(object.body, createWriteStream(file));
        if (hash.digest('hex') !== sha) throw new SourceError(`the stored content of ${rel} does not match its sha256`);
        pointers.set(rel, sha);
      }
    },
    async release(files) {
      for (const rel of files) {
        const sha = pointers.get(rel);
        if (!sha) continue;
        // Put the pointer back: the file stays visible to later recordings' sidecar lookups.
        await writeFile(path.join(dir, rel), `${LFS_HEADER}\noid sha256:${sha}\nsize 0\n`);
        pointers.delete(rel);
      }
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

async function manifestCheckout(deps: Deps, dataset: DatasetRow): Promise<SourceCheckout> {
  if (!dataset.latest_version) throw new SourceError('the dataset has no source repository and no version yet');
  const key = `${dataset.id}/versions/${dataset.latest_version}/manifest.json`;
  const raw = await deps.objects.readAll(key);
  if (!raw) throw new SourceError(`the manifest ${key} is missing`);
  const parsed = JSON.parse(raw.toString('utf8')) as ManifestEntry[] | { files: ManifestEntry[] };
  const entries = Array.isArray(parsed) ? parsed : parsed.files;
  const dir = await mkdtemp(path.join(os.tmpdir(), `nds-src-${dataset.id}-`));
  for (const e of entries) {
    const rel = path.posix.normalize(e.path);
    if (rel.startsWith('../') || path.isAbsolute(rel)) continue;
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${LFS_HEADER}\noid sha256:${e.sha256}\nsize ${e.size}\n`);
  }
  const checkout = checkoutOf(deps, dataset.id, dir, createHash('sha1').update(raw).digest('hex'));
  // Small text files (sidecars, TSV, JSON) are needed to find and describe recordings: fetch them now.
  await checkout.materialize(entries.filter((e) => e.size <= 1_000_000 && !/\.(edf|bdf|eeg|fdt|set)$/i.test(e.path)).map((e) => e.path));
  return checkout;
}

export async function checkoutSource(deps: Deps, dataset: DatasetRow, ref: string): Promise<SourceCheckout> {
  if (!dataset.source_repo) return manifestCheckout(deps, dataset);
  let mirror: string;
  try {
    mirror = await mirrorRepository(deps, dataset);
  } catch (err) {
    throw new SourceError(`the source repository could not be fetched: ${(err as Error).message}`, { cause: err });
  }
  const commit = await resolveCommit(mirror, ref);
  const dir = await mkdtemp(path.join(os.tmpdir(), `nds-src-${dataset.id}-`));
  await extract(mirror, commit, dir);
  await annexLinksToPointers(dir);
  return checkoutOf(deps, dataset.id, dir, commit, mirror);
}

/** git-annex keeps content behind symlinks; turn each into a pointer file so the tree lists them as files. */
async function annexLinksToPointers(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isSymbolicLink()) continue;
    const file = path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    const sha = ANNEX_KEY.exec(await readlink(file))?.[1];
    if (!sha) continue;
    await rm(file);
    await writeFile(file, `${LFS_HEADER}\noid sha256:${sha}\nsize 0\n`);
  }
}

/** Paths changed between two commits of the mirror; undefined when the older commit is unknown there. */
export async function changedPaths(mirror: string, from: string, to: string): Promise<string[] | undefined> {
  const r = await runGit(['--git-dir', mirror, 'diff', '--name-only', '--no-renames', '-z', from, to]);
  if (r.code !== 0) return undefined;
  return r.stdout.toString('utf8').split('\0').filter((p) => p !== '');
}

/** Every file of a folder, relative, with `/` (for companions of a recording). */
export async function listFolder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() || e.isSymbolicLink()).map((e) => e.name);
}
