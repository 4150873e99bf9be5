/**
 * A commit made by the service on `main` of a dataset's hosted repository (on the node that holds it), as a
 * web editor commits: the files are written as blobs, a tree is built in an index of its own (never the
 * repository's, which a bare repository has none of), and `main` moves by compare-and-swap, so a push that
 * lands in between is never overwritten: the commit is refused with 409 and may be asked for again. The commit
 * is written and `main` moved in two steps, so that the caller moves it when it may (an annotation commit: as
 * the last step of its version, under the dataset's row lock).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NdsError } from '../core/errors.js';
import { git, runGit } from '../git/run-git.js';
import type { Deps } from '../deps.js';
import { listTree, type TreeFile } from './git-blobs.js';
import { locateRepository, mainHead } from './hosted-repository.js';
import { contentKey } from './manifest.js';
import { POINTER_MAX, pointerContent } from './version-from-commit.js';
import { MAX_SIDECAR_BYTES } from '../formats/recording-sidecars.js';

/**
 * A text file an annotation commit reads to merge into (an events table, `CHANGES`) that is larger than nds
 * reads of a sidecar: refused in words, before a byte of it is read (a pointer in git may name content of any
 * size, and reading it whole would cost the server that much memory).
 */
export function refuseLargeText(filePath: string, size: number): void {
  if (size <= MAX_SIDECAR_BYTES) return;
  throw new NdsError('conflict', { message: `${filePath} is ${size.toLocaleString('en')} bytes, more than the ${MAX_SIDECAR_BYTES >> 20} MiB nds reads of a text file to commit annotations into.` });
}

/** `main` of a hosted repository held by this node: its folder, head commit and files. */
export interface HostedHead {
  dir: string;
  commit: string;
  files: Map<string, TreeFile>;
}

/** The head of `main` of `datasetId`'s repository, which this node must hold (the route forwards otherwise). */
export async function hostedHead(deps: Pick<Deps, 'db' | 'config' | 'clock'>, datasetId: string): Promise<HostedHead> {
  const place = await locateRepository(deps, datasetId, false);
  if (place.at === 'node') throw new NdsError('repository_unavailable', { message: `The repository of ${datasetId} is held by another node.` });
  const commit = place.at === 'here' ? await mainHead(place.dir) : undefined;
  if (place.at !== 'here' || commit === undefined) throw new NdsError('conflict', { message: `${datasetId} has no commit on main in its hosted repository yet.` });
  const files = new Map((await listTree(place.dir, commit, deps.config.maxTreeFiles)).map((f) => [f.path, f]));
  return { dir: place.dir, commit, files };
}

/** The text of a file of the head; a git-lfs or annex pointer is read from the dataset's content object. */
export async function readHostedText(deps: Pick<Deps, 'objects'>, datasetId: string, head: HostedHead, filePath: string): Promise<string | undefined> {
  const file = head.files.get(filePath);
  if (!file) return undefined;
  const blob = await runGit(['--git-dir', head.dir, 'cat-file', 'blob', file.oid]);
  if (blob.code !== 0) throw new Error(`reading ${filePath} of ${datasetId} at ${head.commit} failed: ${blob.stderr.trim()}`);
  const text = blob.stdout.toString('utf8');
  const pointer = file.size <= POINTER_MAX ? pointerContent(file.mode, text) : undefined;
  if (!pointer) return text;
  // The pointer's own word on the size, then the store's: either may be the larger.
  refuseLargeText(filePath, pointer.size);
  const stored = await deps.objects.head(contentKey(datasetId, pointer.sha256));
  if (stored) refuseLargeText(filePath, stored.size);
  const bytes = await deps.objects.readAll(contentKey(datasetId, pointer.sha256));
  if (!bytes) throw new Error(`content of ${filePath} (${pointer.sha256}) in ${datasetId} is missing from the object store`);
  return bytes.toString('utf8');
}

export interface HostedCommitInput {
  /** Files to write, by path, as plain blobs of mode 100644 (a pointer written there is replaced by the text). */
  files: Map<string, string>;
  message: string;
  author: { name: string; email: string };
  date: Date;
}

/**
 * Writes a commit of `files` on top of `head` and returns its id; `main` does not move (`moveMain` moves it), so
 * until then the commit is in no branch.
 */
export async function writeHostedCommit(head: HostedHead, input: HostedCommitInput): Promise<string> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'nds-commit-'));
  const stamp = `${Math.floor(input.date.getTime() / 1000)} +0000`;
  const env = {
    GIT_INDEX_FILE: path.join(scratch, 'index'),
    GIT_AUTHOR_NAME: input.author.name,
    GIT_AUTHOR_EMAIL: input.author.email,
    GIT_AUTHOR_DATE: stamp,
    GIT_COMMITTER_NAME: input.author.name,
    GIT_COMMITTER_EMAIL: input.author.email,
    GIT_COMMITTER_DATE: stamp,
  };
  const inRepo = (...args: string[]) => ['--git-dir', head.dir, ...args];
  try {
    await git(inRepo('read-tree', head.commit), { env });
    for (const [filePath, text] of input.files) {
      const oid = await git(inRepo('hash-object', '-w', '--stdin'), { input: Buffer.from(text, 'utf8') });
      // `--cacheinfo` takes the path after a comma: a path is one argument, whatever characters it holds.
      await git(inRepo('update-index', '--add', '--cacheinfo', `100644,${oid},${filePath}`), { env });
    }
    const tree = await git(inRepo('write-tree'), { env });
    return await git(inRepo('commit-tree', tree, '-p', head.commit, '-F', '-'), { env, input: Buffer.from(`${input.message.trim()}\n`, 'utf8') });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Moves `main` from `head` to `commit`, only if `main` is still `head`; otherwise `conflict` (a push came first). */
export async function moveMain(head: HostedHead, datasetId: string, commit: string): Promise<void> {
  const moved = await runGit(['--git-dir', head.dir, 'update-ref', '-m', 'nds: annotations committed', 'refs/heads/main', commit, head.commit]);
  if (moved.code !== 0) {
    throw new NdsError('conflict', { message: `main of ${datasetId} moved while the commit was made (a push came first); nothing was committed. Ask again.` });
  }
}
