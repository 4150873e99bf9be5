/**
 * The BIDS source of a conversion, as a folder on disk. A git repository is mirrored under
 * `<DATA_DIR>/sources/<id>.git` and the commit written out from the mirror without the content of its large
 * files (`commit-tree.ts`, decision 0030); large files, and those git-annex and git-lfs keep as pointers, get
 * their content only when a conversion opens them (`materialize`: from the mirror, or from the object store,
 * `<id>/objects/<sha256>`) and lose it again after the recording (`release`), so the disk holds one
 * recording's data at a time and a worker taking one recording's task fetches that recording's files only.
 * A mirror that already has the commit asked for (a task's planned commit) is not fetched again.
 * A dataset without a repository is taken from its latest version manifest the same way.
 *
 * The tree is hostile input. Its repository is fetched only where `datasets/source-repo.ts` allows (the
 * dataset's own hosted repository, or an https URL pinned to the public address checked), and the tree
 * written keeps directories and regular files only: a git-annex link becomes a pointer, every other link an
 * empty file that `SourceTree` refuses to read, with the reason recorded here.
 *
 * A hosted repository is fetched over HTTP like a remote one, never read from a folder (decision 0026): from
 * the node that holds it (`datasets/repository-holders.ts`; NODE_URL when none is recorded), with a fetch
 * credential that reads this dataset's repository for five minutes and can do nothing else.
 */
import { createHash } from 'node:crypto';
import { constants, createWriteStream, existsSync } from 'node:fs';
import { link, lstat, mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import type { FileObjectStore } from '../objects/file-object-store.js';
import { S3ObjectStore } from '../objects/s3-object-store.js';
import { classifySourceRepo, pinnedFetch, resolveSource, systemLookup, type HostLookup } from '../datasets/source-repo.js';
import { signGitFetchCredential } from '../datasets/git-fetch-credential.js';
import { mainHead } from '../datasets/hosted-repository.js';
import { repositoryHolder } from '../datasets/repository-holders.js';
import { eachGitRecord, GitError, GitOutputTooLargeError, runGit, type RunGitOptions } from '../git/run-git.js';
import { repositoryBytes } from '../git/repository-dir.js';
import { fetchProcessLimits, PACK_BOUND_SETTINGS } from '../git/fetch-bounds.js';
import { bytesText } from '../core/byte-size.js';
import { LFS_HEADER, writeBlob, writeCommitTree } from './commit-tree.js';
import { sourceMirrorDir } from './zarr-ready.js';

export interface SourceCheckout {
  /** The tree written out (large files and pointers without their content until `materialize`). */
  dir: string;
  /** 40-hex commit id (for a manifest source: the SHA-1 of the manifest). */
  commit: string;
  /** The mirror, when the source is a git repository (for `git diff`). */
  mirror?: string;
  /** Entries of the tree left empty and never read, by path (relative, `/`): the sentence opening one fails with. */
  refused: ReadonlyMap<string, string>;
  /**
   * Gives each of `files` (relative paths) its content: a large file's from the mirror, a pointer's from the
   * object store; a file that has its content already is left as it is. Throws `SourceError` when the content
   * cannot be had (a pointer's object missing or not matching its sha256).
   */
  materialize(files: string[]): Promise<void>;
  /** Takes back the content `materialize` gave since the last release (keeps the disk to one recording's data). */
  release(): Promise<void>;
  /**
   * The SHA-256 (hex) of a file given its content from a content object since the last release: the one its
   * pointer names, which is the object's key, and the object store holds at a content key only what was checked
   * against it when written (decision 0034). Undefined for any other file (a blob of the mirror, a small file).
   */
  contentSha256(rel: string): string | undefined;
  cleanup(): Promise<void>;
}


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
  /**
   * Check out where `main` is now rather than `ref` (a push's commit): the repository is fetched whatever the
   * mirror holds, and `ref` is used only when it has no `main`.
   */
  followMain?: boolean;
}

interface FetchPlan {
  from: string;
  options: RunGitOptions;
  /** Whether git's own words may be shown to the owner (a remote URL's problem, not the service's inside). */
  showDetail: boolean;
}

/** Where git fetches the dataset's source from, and with which transports and settings; refused sources throw. */
/** What `source_repo` names, under today's rules; a refused source throws. */
function allowedSource(deps: CheckoutDeps, dataset: DatasetRow) {
  const source = classifySourceRepo(dataset.source_repo!, dataset.id, deps.config);
  if (source.kind === 'refused') throw new SourceError(`The source repository is refused: ${source.reason}. Set source_repo again (PATCH /datasets/${dataset.id}).`);
  return source;
}

async function fetchPlan(deps: CheckoutDeps, dataset: DatasetRow, options: CheckoutOptions): Promise<FetchPlan> {
  const source = allowedSource(deps, dataset);
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

/** How often a fetch's mirror is measured against MAX_SOURCE_MIRROR_BYTES. */
const MIRROR_WATCH_MS = 1000;

async function mirrorRepository(deps: CheckoutDeps, dataset: DatasetRow, checkoutOptions: CheckoutOptions): Promise<string> {
  const { from, options, showDetail } = await fetchPlan(deps, dataset, checkoutOptions);
  const mirror = sourceMirrorDir(deps.config.dataDir, dataset.id);
  const limit = deps.config.maxSourceMirrorBytes;
  const tooLarge = () =>
    new SourceError(`The source repository is larger than this service mirrors (${bytesText(limit)}, MAX_SOURCE_MIRROR_BYTES); nds stopped fetching it and kept nothing of it.`);
  const run = async (args: string[]) => {
    // git bounds no fetch: the mirror is measured as it grows, and git stopped past the bound.
    const stop = new AbortController();
    let over = false;
    const fetchRun = args[0] === 'clone' || args.includes('fetch');
    const fetching = limit > 0 && fetchRun;
    const watch = fetching
      ? setInterval(() => {
          void repositoryBytes(mirror, { arriving: true }).then((bytes) => {
            if (bytes <= limit || over) return;
            over = true;
            stop.abort();
          }, () => undefined);
        }, MIRROR_WATCH_MS)
      : undefined;
    let r: Awaited<ReturnType<typeof runGit>>;
    try {
      // A fetch's git runs under the limits of a served one (decision 0059): index-pack inflates every object.
      const bounded = fetchRun ? { limits: fetchProcessLimits(deps.config), config: { ...PACK_BOUND_SETTINGS, ...options.config } } : {};
      r = await runGit(args, { ...options, ...bounded, signal: stop.signal });
    } finally {
      if (watch) clearInterval(watch);
    }
    // Measured once more at the end: a fetch quicker than one look is bound the same.
    if (over || (fetching && (await repositoryBytes(mirror, { arriving: true })) > limit)) {
      await rm(mirror, { recursive: true, force: true });
      throw tooLarge();
    }
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

/**
 * The dataset's mirror, holding `ref`. A commit id the mirror has already (the planned commit a task is
 * given, on the host that planned it or after an earlier task) names the same tree forever: it is read as it
 * is, with no request to the holder; anything else is fetched first.
 */
async function mirrorWith(deps: CheckoutDeps, dataset: DatasetRow, ref: string, options: CheckoutOptions): Promise<string> {
  const mirror = sourceMirrorDir(deps.config.dataDir, dataset.id);
  if (/^[0-9a-f]{40}$/.test(ref) && existsSync(mirror)) {
    allowedSource(deps, dataset);
    const r = await runGit(['--git-dir', mirror, 'cat-file', '-e', `${ref}^{commit}`]);
    if (r.code === 0) return mirror;
  }
  return mirrorRepository(deps, dataset, options);
}

async function resolveCommit(mirror: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) throw new SourceError(`${ref} is not a git reference.`);
  for (const candidate of /^[0-9a-f]{40}$/.test(ref) ? [ref] : [`refs/heads/${ref}`, ref, 'HEAD']) {
    const r = await runGit(['--git-dir', mirror, 'rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]);
    if (r.code === 0) return r.stdout.toString().trim();
  }
  throw new SourceError(`The repository has no commit for ${ref}.`);
}

/** The sha256 a pointer file names, or undefined for an ordinary file. */
async function pointerTarget(file: string): Promise<string | undefined> {
  const s = await lstat(file).catch(() => undefined);
  // The checkout holds no links (`writeCommitTree`): anything but a small regular file is no pointer.
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

/** Where a file's content came from when it was materialized, and what it is put back to on release. */
type Fetched = { kind: 'pointer'; sha: string } | { kind: 'blob' };

/** Replaces `file` by the placeholder it had before it was given its content. */
async function putBack(file: string, was: Fetched): Promise<void> {
  await rm(file, { force: true });
  await writeFile(file, was.kind === 'pointer' ? `${LFS_HEADER}\noid sha256:${was.sha}\nsize 0\n` : '', { flag: 'wx' });
}

interface CheckoutParts {
  dir: string;
  commit: string;
  refused: ReadonlyMap<string, string>;
  /** The mirror, for a git source. */
  mirror?: string;
  /** Files left empty by `writeCommitTree`: their blob in the mirror. */
  deferred?: ReadonlyMap<string, string>;
}

function checkoutOf(deps: Pick<Deps, 'objects'>, datasetId: string, parts: CheckoutParts): SourceCheckout {
  const { dir, mirror } = parts;
  const deferred = parts.deferred ?? new Map<string, string>();
  /** Content given since the last release, by path. */
  const fetched = new Map<string, Fetched>();
  /** Materializations under way, by path: a file opened twice at once is fetched once. */
  const inFlight = new Map<string, Promise<void>>();
  const inside = (rel: string) => {
    const normal = path.posix.normalize(rel);
    if (normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) throw new SourceError(`${rel} lies outside the dataset.`);
    return { normal, file: path.join(dir, normal) };
  };
  /** Gives `file` the content object `sha`. */
  const fromObjects = async (rel: string, file: string, sha: string): Promise<void> => {
    const key = `${datasetId}/objects/${sha}`;
    await rm(file, { force: true });
    if (deps.objects.kind === 'file') {
      // The folder store's own file, linked: no copy of the data (new pages cost this VM more than the
      // conversion's reads) and no hash of it (its key is its sha256, checked when it was written; decision 0034).
      // The store replaces an object by renaming a new file over it, never writes into one, and a release
      // removes the link only.
      try {
        await link((deps.objects as FileObjectStore).pathOf(key), file);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw new SourceError(`the content of ${rel} (sha256 ${sha}) is not in the object store`);
        // Another file system (EXDEV), or links not allowed: copied below.
      }
    }
    if (deps.objects instanceof S3ObjectStore) {
      // One plain GET into one reused buffer, hashed and written as it comes (decision 0050); else the SDK's read.
      const copied = await deps.objects.copyToNewFile(key, file);
      if (copied) {
        if (copied.sha256 !== sha) throw new SourceError(`the stored content of ${rel} does not match its sha256`);
        return;
      }
    }
    const object = await deps.objects.get(key);
    if (!object) throw new SourceError(`the content of ${rel} (sha256 ${sha}) is not in the object store`);
    const hash = createHash('sha256');
    object.body.on('data', (chunk: Buffer) => hash.update(chunk));
    await pipeline(object.body, createWriteStream(file, { flags: 'wx', highWaterMark: 1 << 20 }));
    if (hash.digest('hex') !== sha) throw new SourceError(`the stored content of ${rel} does not match its sha256`);
  };
  const fetchOne = async (rel: string) => {
    const { normal, file } = inside(rel);
    if (fetched.has(normal)) return;
    const oid = deferred.get(normal);
    if (oid && mirror) {
      await rm(file, { force: true });
      try {
        await writeBlob(mirror, oid, file);
      } catch (cause) {
        throw new SourceError(`the content of ${normal} could not be read from the source repository`, { cause });
      }
      fetched.set(normal, { kind: 'blob' });
      return;
    }
    const sha = await pointerTarget(file);
    if (!sha) return;
    try {
      await fromObjects(normal, file, sha);
    } catch (err) {
      // The pointer goes back: the task's next attempt on this checkout finds the file to fill again, not a file gone.
      await putBack(file, { kind: 'pointer', sha });
      throw err;
    }
    fetched.set(normal, { kind: 'pointer', sha });
  };
  const materialize = async (files: string[]) => {
    for (const rel of files) {
      let running = inFlight.get(rel);
      if (!running) {
        running = fetchOne(rel).finally(() => inFlight.delete(rel));
        inFlight.set(rel, running);
      }
      await running;
    }
  };
  return {
    dir,
    commit: parts.commit,
    mirror,
    refused: parts.refused,
    materialize,
    async release() {
      // Put the placeholder back: the file stays visible to later recordings' sidecar lookups.
      for (const [rel, was] of fetched) await putBack(inside(rel).file, was);
      fetched.clear();
    },
    contentSha256(rel) {
      const was = fetched.get(path.posix.normalize(rel));
      return was?.kind === 'pointer' ? was.sha : undefined;
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
  // Every file is a pointer until a conversion opens it (sidecars included): a task fetches its recording's files only.
  return checkoutOf(deps, dataset.id, { dir, commit: createHash('sha1').update(raw).digest('hex'), refused: new Map() });
}

export async function checkoutSource(deps: CheckoutDeps, dataset: DatasetRow, ref: string, options: CheckoutOptions = {}): Promise<SourceCheckout> {
  if (!dataset.source_repo) return manifestCheckout(deps, dataset);
  const mirror = options.followMain ? await mirrorRepository(deps, dataset, options) : await mirrorWith(deps, dataset, ref, options);
  const commit = (options.followMain ? await mainHead(mirror) : undefined) ?? (await resolveCommit(mirror, ref));
  const dir = await mkdtemp(path.join(os.tmpdir(), `nds-src-${dataset.id}-`));
  try {
    let tree;
    try {
      tree = await writeCommitTree(mirror, commit, dir, { maxFiles: deps.config.maxTreeFiles, maxFileBytes: deps.config.maxGitFileBytes });
    } catch (cause) {
      if (cause instanceof GitOutputTooLargeError) {
        const most = deps.config.maxTreeFiles.toLocaleString('en');
        throw new SourceError(`Commit ${commit} lists more than ${most} files; nds converts trees of up to ${most} files.`, { cause });
      }
      throw new SourceError(`Extracting commit ${commit} failed.`, { cause });
    }
    return checkoutOf(deps, dataset.id, { dir, commit, mirror, ...tree });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Paths changed between two commits of the mirror; undefined when the older commit is unknown there, or when
 * more changed than two trees of `maxFiles` each can hold (then everything is converted).
 */
export async function changedPaths(mirror: string, from: string, to: string, maxFiles: number): Promise<string[] | undefined> {
  const paths: string[] = [];
  try {
    await eachGitRecord(['--git-dir', mirror, 'diff', '--name-only', '--no-renames', '-z', from, to], { separator: '\0', limit: 2 * maxFiles }, (p) => {
      if (p !== '') paths.push(p);
    });
  } catch (err) {
    if (err instanceof GitError || err instanceof GitOutputTooLargeError) return undefined;
    throw err;
  }
  return paths;
}

/** Every file of a folder of the checkout, by name (for companions of a recording). */
export async function listFolder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
}
