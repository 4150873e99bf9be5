/**
 * The BIDS source of a conversion, as a folder on disk. A git repository is mirrored under
 * `<DATA_DIR>/sources/<id>.git` and the commit extracted with `git archive`; large files stay pointers
 * (git-annex `SHA256E` symlinks, git-lfs pointer files) until a recording needs them, and are then read
 * from the object store (`<id>/objects/<sha256>`), so the disk holds one recording's data at a time.
 * A dataset without a repository is taken from its latest version manifest the same way.
 *
 * The tree is hostile input. Its repository is fetched only where `datasets/source-repo.ts` allows (the
 * dataset's own hosted repository, or an https URL pinned to the public address checked), and the extracted
 * tree keeps directories and regular files only: a git-annex link becomes a pointer, every other link (or
 * hard link, FIFO, device) an empty file that `SourceTree` refuses to read, with the reason recorded here.
 *
 * A hosted repository is fetched over HTTP like a remote one, never read from a folder (decision 0026): from
 * the node that holds it (`datasets/repository-holders.ts`; NODE_URL when none is recorded), with a fetch
 * credential that reads this dataset's repository for five minutes and can do nothing else.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, createWriteStream, existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { executableSearchPath } from '../core/config.js';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { classifySourceRepo, pinnedFetch, resolveSource, systemLookup, type HostLookup } from '../datasets/source-repo.js';
import { signGitFetchCredential } from '../datasets/git-fetch-credential.js';
import { repositoryHolder } from '../datasets/repository-holders.js';
import { runGit, type RunGitOptions } from '../git/run-git.js';
import { spawnGit } from '../git/spawn-git.js';
import { sourceMirrorDir } from './zarr-ready.js';

export interface SourceCheckout {
  /** The extracted tree. */
  dir: string;
  /** 40-hex commit id (for a manifest source: the SHA-1 of the manifest). */
  commit: string;
  /** The mirror, when the source is a git repository (for `git diff`). */
  mirror?: string;
  /** Entries of the tree that are not read, by path (relative, `/`): what each was (`a symbolic link`). */
  refused: ReadonlyMap<string, string>;
  /** Replaces any pointer among `files` (relative paths) by its content from the object store. */
  materialize(files: string[]): Promise<void>;
  /** Removes materialized content again (keeps the disk to one recording's data). */
  release(files: string[]): Promise<void>;
  cleanup(): Promise<void>;
}

const LFS_HEADER = 'version https://git-lfs.github.com/spec/v1';
const ANNEX_KEY = /SHA256E?-s\d+--([0-9a-f]{64})/;

/**
 * A conversion that cannot start from its source (refused, unreachable, no such commit). Its message is shown
 * to the dataset's owner (`zarr_error`): it names no path of the server; git's own words stay in `cause`.
 */
export class SourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceError';
  }
}

export type CheckoutDeps = Pick<Deps, 'config' | 'objects' | 'db' | 'clock'>;

export interface CheckoutOptions {
  /** Resolves the host of a remote `source_repo` (default: the system resolver). */
  lookup?: HostLookup;
  /** The NODE_URL of the node holding a dataset's hosted repository (default: as recorded in the database). */
  holder?: (datasetId: string) => Promise<string | undefined>;
}

interface FetchPlan {
  from: string;
  options: RunGitOptions;
  /** Whether git's own words may be shown to the owner (a remote URL's problem, not the service's inside). */
  showDetail: boolean;
}

/** Where git fetches the dataset's source from, and with which transports and settings; refused sources throw. */
async function fetchPlan(deps: CheckoutDeps, dataset: DatasetRow, options: CheckoutOptions): Promise<FetchPlan> {
  const source = classifySourceRepo(dataset.source_repo!, dataset.id, deps.config);
  if (source.kind === 'refused') throw new SourceError(`The source repository is refused: ${source.reason}. Set source_repo again (PATCH /datasets/${dataset.id}).`);
  if (source.kind === 'hosted') {
    const holder = (await (options.holder ?? ((id) => repositoryHolder(deps.db, id)))(dataset.id)) ?? deps.config.nodeUrl;
    const credential = signGitFetchCredential(deps.config, dataset.id, deps.clock.now());
    // The credential goes in git's environment (GIT_CONFIG_*), never on a command line or into the mirror's config.
    const config = { 'http.extraHeader': `Authorization: Bearer ${credential}`, 'http.followRedirects': 'false' };
    return { from: `${holder}/git/${dataset.id}.git`, options: { protocols: ['http', 'https'], config }, showDetail: false };
  }
  const resolved = await resolveSource(source.url, deps.config, options.lookup ?? systemLookup);
  if (!resolved.ok) throw new SourceError(`The source repository ${source.url.href} is not fetched: ${resolved.reason}.`);
  return { from: source.url.href, options: { protocols: ['https'], config: pinnedFetch(source.url, resolved.address) }, showDetail: true };
}

async function mirrorRepository(deps: CheckoutDeps, dataset: DatasetRow, checkoutOptions: CheckoutOptions): Promise<string> {
  const { from, options, showDetail } = await fetchPlan(deps, dataset, checkoutOptions);
  const mirror = sourceMirrorDir(deps.config.dataDir, dataset.id);
  const run = async (args: string[]) => {
    const r = await runGit(args, options);
    if (r.code === 0) return;
    const detail = r.stderr.trim().split('\n').filter((l) => l.trim() !== '').at(-1) ?? `exit ${r.code}`;
    const cause = new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
    // git's words name a remote URL's problem; a hosted repository's would name the service's nodes.
    if (showDetail) throw new SourceError(`The source repository could not be fetched: ${detail}.`, { cause });
    throw new SourceError("The dataset's hosted repository could not be fetched from the node that holds it; the conversion can be run again once that node answers.", { cause });
  };
  if (!existsSync(mirror)) {
    await mkdir(path.dirname(mirror), { recursive: true });
    await run(['clone', '--quiet', '--mirror', '--', from, mirror]);
  } else {
    await run(['--git-dir', mirror, 'remote', 'set-url', 'origin', from]);
    await run(['--git-dir', mirror, 'fetch', '--quiet', '--prune', 'origin', '+refs/*:refs/*']);
  }
  return mirror;
}

async function resolveCommit(mirror: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) throw new SourceError(`${ref} is not a git reference.`);
  for (const candidate of /^[0-9a-f]{40}$/.test(ref) ? [ref] : [`refs/heads/${ref}`, ref, 'HEAD']) {
    const r = await runGit(['--git-dir', mirror, 'rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]);
    if (r.code === 0) return r.stdout.toString().trim();
  }
  throw new SourceError(`The repository has no commit for ${ref}.`);
}

function extract(mirror: string, commit: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const archive = spawnGit(['--git-dir', mirror, 'archive', '--format=tar', commit]);
    archive.stdin.end();
    // tar too gets nothing of this process's environment (a TAR_OPTIONS could add options).
    const tar = spawn('tar', ['-x', '--no-same-owner', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'], env: { PATH: executableSearchPath(), LC_ALL: 'C' } });
    let err = '';
    archive.stderr.on('data', (d) => (err += d));
    tar.stderr.on('data', (d) => (err += d));
    archive.stdout.pipe(tar.stdin);
    let pending = 2;
    const done = (code: number | null) => {
      if (code !== 0) return reject(new SourceError(`Extracting commit ${commit} failed.`, { cause: new Error(err.trim()) }));
      if (--pending === 0) resolve();
    };
    archive.on('close', done);
    tar.on('close', done);
    archive.on('error', reject);
    tar.on('error', reject);
  });
}

/** The sha256 a pointer file names, or undefined for an ordinary file. */
async function pointerTarget(file: string): Promise<string | undefined> {
  const s = await lstat(file).catch(() => undefined);
  // The checkout holds no links (`keepRegularFiles`): anything but a small regular file is no pointer.
  if (!s?.isFile() || s.size > 1024) return undefined;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(1024), 0, 1024, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    if (!text.startsWith(LFS_HEADER)) return undefined;
    return /^oid sha256:([0-9a-f]{64})$/m.exec(text)?.[1];
  } finally {
    await handle.close();
  }
}

function checkoutOf(deps: Pick<Deps, 'objects'>, datasetId: string, dir: string, commit: string, refused: ReadonlyMap<string, string>, mirror?: string): SourceCheckout {
  const pointers = new Map<string, string>();
  const inside = (rel: string) => {
    const normal = path.posix.normalize(rel);
    if (normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) throw new SourceError(`${rel} lies outside the dataset.`);
    return path.join(dir, normal);
  };
  return {
    dir,
    commit,
    mirror,
    refused,
    async materialize(files) {
      for (const rel of files) {
        const file = inside(rel);
        const sha = await pointerTarget(file);
        if (!sha) continue;
        const object = await deps.objects.get(`${datasetId}/objects/${sha}`);
        if (!object) throw new SourceError(`the content of ${rel} (sha256 ${sha}) is not in the object store`);
        await rm(file, { force: true });
        const hash = createHash('sha256');
        object.body.on('data', (chunk: Buffer) => hash.update(chunk));
        await pipeline(object.body, createWriteStream(file, { flags: 'wx' }));
        if (hash.digest('hex') !== sha) throw new SourceError(`the stored content of ${rel} does not match its sha256`);
        pointers.set(rel, sha);
      }
    },
    async release(files) {
      for (const rel of files) {
        const sha = pointers.get(rel);
        if (!sha) continue;
        // Put the pointer back: the file stays visible to later recordings' sidecar lookups.
        await rm(inside(rel), { force: true });
        await writeFile(inside(rel), `${LFS_HEADER}\noid sha256:${sha}\nsize 0\n`, { flag: 'wx' });
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

async function manifestCheckout(deps: Pick<Deps, 'objects'>, dataset: DatasetRow): Promise<SourceCheckout> {
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
  const checkout = checkoutOf(deps, dataset.id, dir, createHash('sha1').update(raw).digest('hex'), new Map());
  // Small text files (sidecars, TSV, JSON) are needed to find and describe recordings: fetch them now.
  await checkout.materialize(entries.filter((e) => e.size <= 1_000_000 && !/\.(edf|bdf|eeg|fdt|set)$/i.test(e.path)).map((e) => e.path));
  return checkout;
}

export async function checkoutSource(deps: CheckoutDeps, dataset: DatasetRow, ref: string, options: CheckoutOptions = {}): Promise<SourceCheckout> {
  if (!dataset.source_repo) return manifestCheckout(deps, dataset);
  const mirror = await mirrorRepository(deps, dataset, options);
  const commit = await resolveCommit(mirror, ref);
  const dir = await mkdtemp(path.join(os.tmpdir(), `nds-src-${dataset.id}-`));
  try {
    await extract(mirror, commit, dir);
    const refused = await keepRegularFiles(dir);
    return checkoutOf(deps, dataset.id, dir, commit, refused, mirror);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Leaves the extracted tree with folders and regular files only. git-annex keeps content behind symlinks
 * (`…/SHA256E-s<size>--<sha256>.<ext>`): each becomes a pointer file, so the tree lists it as a file and its
 * content comes from the object store; the link itself is never followed. Any other link, a hard link, a
 * FIFO or a device becomes an empty file, and the map returned says what it was.
 */
async function keepRegularFiles(dir: string): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      const file = path.join(dir, name);
      const s = await lstat(file);
      if (s.isDirectory()) {
        await walk(name);
        continue;
      }
      if (s.isFile() && s.nlink === 1) continue;
      const sha = s.isSymbolicLink() ? ANNEX_KEY.exec(await readlink(file))?.[1] : undefined;
      await rm(file, { force: true });
      if (sha) {
        await writeFile(file, `${LFS_HEADER}\noid sha256:${sha}\nsize 0\n`, { flag: 'wx' });
        continue;
      }
      refused.set(name, s.isSymbolicLink() ? 'a symbolic link' : s.isFile() ? 'a hard link' : 'not a regular file');
      await writeFile(file, '', { flag: 'wx' });
    }
  };
  await walk('');
  return refused;
}

/** Paths changed between two commits of the mirror; undefined when the older commit is unknown there. */
export async function changedPaths(mirror: string, from: string, to: string): Promise<string[] | undefined> {
  const r = await runGit(['--git-dir', mirror, 'diff', '--name-only', '--no-renames', '-z', from, to]);
  if (r.code !== 0) return undefined;
  return r.stdout.toString('utf8').split('\0').filter((p) => p !== '');
}

/** Every file of a folder of the checkout, by name (for companions of a recording). */
export async function listFolder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
}
