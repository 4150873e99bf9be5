/**
 * A commit of a source mirror written out as a folder for conversion, without the content of its large
 * files (decision 0030). The tree is listed from git (`ls-tree`), so every file and folder is there for the
 * recordings to be found and the BIDS sidecars to be looked up, but a file larger than `deferAbove` (a
 * recording's data) is left as an empty placeholder whose content stays in the mirror until a conversion
 * opens it (`writeBlob`). A job's planner then writes no data at all, and a worker taking one recording's task
 * writes that recording's files only, not the dataset's.
 *
 * The tree is hostile input (decision 0018): only folders and regular files are made, by this code (never by
 * an archive extractor), each new file opened exclusively; a git-annex link becomes a pointer to the dataset's
 * objects, any other link an empty file recorded as refused, a submodule an empty folder (as `git archive`
 * leaves it), and a name that could climb out of the folder is not written at all.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { spawnGit } from '../git/spawn-git.js';
import { eachGitRecord } from '../git/run-git.js';

/** Files above this size are left in the mirror until opened: recordings' data, not their sidecars. */
export const DEFER_ABOVE = 64 * 1024;

export const LFS_HEADER = 'version https://git-lfs.github.com/spec/v1';
const ANNEX_KEY = /SHA256E?-s\d+--([0-9a-f]{64})/;
/** The longest link target read: Linux's PATH_MAX; git-annex's are a few hundred bytes. */
const LINK_TARGET_MAX = 4096;

export interface CommitTree {
  /** Entries left empty and never read, by path (relative, `/`): the sentence opening one fails with. */
  refused: Map<string, string>;
  /** Files left empty until opened, by path: their blob in the mirror. */
  deferred: Map<string, string>;
}

function linkRefused(rel: string): string {
  return `${rel} is a symbolic link in the repository: nds reads only regular files of a dataset (git-annex links excepted). Commit the file itself.`;
}

function tooLargeInGit(rel: string, size: number, limit: number): string {
  const [bytes, most] = [size, limit].map((n) => n.toLocaleString('en'));
  return `${rel} holds ${bytes} bytes in git itself, more than the ${most} nds reads from git (MAX_GIT_FILE_BYTES): make it a git-lfs pointer and upload its content (nds datasets upload does both).`;
}

interface Entry {
  mode: string;
  type: string;
  oid: string;
  size: number;
  path: string;
}

/** A path of the tree as a relative name that stays inside the folder; undefined for one that would not. */
function safeRelative(name: string): string | undefined {
  const parts = name.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return undefined;
  return parts.join('/');
}

/** Every entry of the commit's tree; `GitOutputTooLargeError` past `maxFiles`, before anything is written. */
async function listTree(mirror: string, commit: string, maxFiles: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  await eachGitRecord(['--git-dir', mirror, 'ls-tree', '-r', '-z', '--long', '--full-tree', commit], { separator: '\0', limit: maxFiles }, (record) => {
    if (record === '') return;
    const tab = record.indexOf('\t');
    const [mode, type, oid, size] = record.slice(0, tab).split(/ +/) as [string, string, string, string];
    entries.push({ mode, type, oid, size: size === '-' ? 0 : Number(size), path: record.slice(tab + 1) });
  });
  return entries;
}

/**
 * Writes the blobs `wanted` (oid → what to do with its bytes) read in one `git cat-file --batch`, each as soon
 * as it has come in whole.
 */
async function readBlobs(mirror: string, wanted: Map<string, (bytes: Buffer) => Promise<void>>): Promise<void> {
  if (wanted.size === 0) return;
  const child = spawnGit(['--git-dir', mirror, 'cat-file', '--batch']);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.on('error', () => {});
  child.stdin.end([...wanted.keys()].join('\n') + '\n');
  // The chunks not yet taken apart, kept as they came and joined only when an object is whole (or a header is
  // looked for): joining at every chunk would copy a large object over and over.
  let chunks: Buffer[] = [];
  let held = 0;
  let current: { oid: string; size: number } | undefined;
  const joined = (): Buffer => {
    if (chunks.length > 1) chunks = [Buffer.concat(chunks, held)];
    return chunks[0] ?? Buffer.alloc(0);
  };
  const drop = (n: number) => {
    chunks = [joined().subarray(n)];
    held -= n;
  };
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      held += chunk.length;
      for (;;) {
        if (!current) {
          const eol = joined().indexOf(10);
          if (eol < 0) break;
          const [oid, type, size] = joined().subarray(0, eol).toString('utf8').split(' ') as [string, string, string];
          drop(eol + 1);
          if (type !== 'blob') throw new Error(`git cat-file: ${oid} is ${type}`);
          current = { oid, size: Number(size) };
        }
        // The object's bytes and the newline after them.
        if (held < current.size + 1) break;
        await wanted.get(current.oid)!(Buffer.from(joined().subarray(0, current.size)));
        drop(current.size + 1);
        current = undefined;
      }
    }
  } catch (err) {
    child.kill();
    throw err;
  }
  const code = await exited;
  if (code !== 0 || current) throw new Error(`git cat-file --batch: ${stderr.trim() || `exit ${code}`}`);
}

/**
 * Writes `commit` of the mirror into the empty folder `dir`: folders, files up to `deferAbove` with their
 * content, larger ones as empty placeholders (`deferred`), and those over `maxFileBytes` (MAX_GIT_FILE_BYTES)
 * as empty files never read (`refused`, as links are). Throws on a git failure, and
 * `GitOutputTooLargeError` for a tree of more than `limits.maxFiles` entries (before anything is written).
 */
export async function writeCommitTree(mirror: string, commit: string, dir: string, limits: { maxFiles: number; maxFileBytes?: number; deferAbove?: number }): Promise<CommitTree> {
  const deferAbove = limits.deferAbove ?? DEFER_ABOVE;
  const maxFileBytes = limits.maxFileBytes ?? Infinity;
  const refused = new Map<string, string>();
  const deferred = new Map<string, string>();
  const made = new Set<string>(['']);
  const folder = async (rel: string) => {
    if (made.has(rel)) return;
    await mkdir(path.join(dir, rel), { recursive: true });
    for (let p = rel; p !== '.' && p !== ''; p = path.posix.dirname(p)) made.add(p);
  };
  const fileAt = async (rel: string, content: string | Buffer) => {
    await folder(path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel));
    await writeFile(path.join(dir, rel), content, { flag: 'wx' });
  };
  const wanted = new Map<string, Array<(bytes: Buffer) => Promise<void>>>();
  const want = (oid: string, use: (bytes: Buffer) => Promise<void>) => {
    const uses = wanted.get(oid);
    if (uses) uses.push(use);
    else wanted.set(oid, [use]);
  };
  for (const entry of await listTree(mirror, commit, limits.maxFiles)) {
    const rel = safeRelative(entry.path);
    if (rel === undefined) continue;
    if (entry.type === 'commit') {
      await folder(rel);
    } else if (entry.type !== 'blob') {
      continue;
    } else if (entry.mode === '120000') {
      // A link's blob is its target: git-annex's name the content; any other link is refused, never made. A
      // target longer than a path can be is no link of git-annex's, and is not even read.
      if (entry.size > LINK_TARGET_MAX) {
        refused.set(rel, linkRefused(rel));
        await fileAt(rel, '');
        continue;
      }
      want(entry.oid, async (target) => {
        const sha = ANNEX_KEY.exec(target.toString('utf8'))?.[1];
        if (sha) return fileAt(rel, `${LFS_HEADER}\noid sha256:${sha}\nsize 0\n`);
        refused.set(rel, linkRefused(rel));
        return fileAt(rel, '');
      });
    } else if (entry.size > maxFileBytes) {
      // Git packs a file of zeros a thousand to one: a push of megabytes would be gigabytes to write and convert.
      refused.set(rel, tooLargeInGit(rel, entry.size, maxFileBytes));
      await fileAt(rel, '');
    } else if (entry.size > deferAbove) {
      deferred.set(rel, entry.oid);
      await fileAt(rel, '');
    } else {
      want(entry.oid, (bytes) => fileAt(rel, bytes));
    }
  }
  const uses = new Map([...wanted].map(([oid, list]) => [oid, async (bytes: Buffer) => void (await Promise.all(list.map((use) => use(bytes))))]));
  await readBlobs(mirror, uses);
  return { refused, deferred };
}

/** Writes blob `oid` of the mirror to the new file `file`. */
export async function writeBlob(mirror: string, oid: string, file: string): Promise<void> {
  const child = spawnGit(['--git-dir', mirror, 'cat-file', 'blob', oid]);
  child.stdin.end();
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  await pipeline(child.stdout, createWriteStream(file, { flags: 'wx', highWaterMark: 1 << 20 }));
  const code = await exited;
  if (code !== 0) throw new Error(`git cat-file blob ${oid}: ${stderr.trim() || `exit ${code}`}`);
}
