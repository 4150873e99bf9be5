/**
 * A version made from a commit of the dataset's hosted repository (docs/datasets.md): the manifest lists every
 * file of the commit's tree. An annex symlink or key file, or a git-lfs pointer, stands for content that must
 * already be in the object store; any other blob is hashed and copied into the store, so every entry can be
 * downloaded from the store alone. The commit is tagged `v<version>`; a tag of that name on another commit
 * refuses the version.
 */
import type { User } from '../db/accounts-tables.js';
import { createHash } from 'node:crypto';
import { runGit } from '../git/run-git.js';
import type { DatasetVersionRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { locateRepository } from './hosted-repository.js';
import { NdsError } from '../core/errors.js';
import { eachBlob, listTree, type TreeFile } from './git-blobs.js';
import { contentKey, normalizeManifest, type ManifestEntry } from './manifest.js';
import { isSemver } from './semver.js';
import { contentGrantKey, recordStoredBytes, reserveStorage } from './storage-quota.js';
import { UPLOAD_URL_TTL_S } from './uploads.js';
import { createVersion, missingContent, type NewVersion } from './versions.js';

export interface VersionFromCommit {
  version: string;
  /** A 40-hex commit id, or `main` for the branch head. */
  commit: string;
  createdBy: number;
  /** As `NewVersion.madeBy`: the account whose request makes the version, asked again under the row lock. */
  madeBy?: User;
  /** As `NewVersion.lastUnderLock`: done under the row lock as the version's last step; a throw refuses it. */
  lastUnderLock?: NewVersion['lastUnderLock'];
}

const LFS_HEADER = 'version https://git-lfs.github.com/spec/v1\n';
const ANNEX_KEY = /(?:^|\/)SHA256E?-s(\d+)--([0-9a-f]{64})(?:\.[^/]*)?$/;
/** Pointers are tiny; a blob above this size is content, whatever it starts with. */
export const POINTER_MAX = 1024;

/** The content a pointer stands for: an annex symlink target or key file, or a git-lfs pointer file. */
export function pointerContent(mode: string, blob: string): { size: number; sha256: string } | undefined {
  const text = blob.trim();
  if (mode === '120000' || text.startsWith('/annex/objects/')) {
    const m = ANNEX_KEY.exec(text);
    return m ? { size: Number(m[1]), sha256: m[2] } : undefined;
  }
  if (!blob.startsWith(LFS_HEADER)) return undefined;
  const sha256 = /^oid sha256:([0-9a-f]{64})$/m.exec(blob)?.[1];
  const size = /^size (\d+)$/m.exec(blob)?.[1];
  return sha256 && size ? { size: Number(size), sha256 } : undefined;
}

async function resolveCommit(dir: string, datasetId: string, ref: string): Promise<string> {
  const name = ref === 'main' ? 'refs/heads/main' : ref;
  const r = await runGit(['--git-dir', dir, 'rev-parse', '--verify', '--quiet', `${name}^{commit}`]);
  if (r.code !== 0) throw new NdsError('not_found', { message: `The repository of ${datasetId} has no commit ${ref}.` });
  return r.stdout.toString().trim();
}

async function tagTarget(dir: string, tag: string): Promise<string | undefined> {
  const r = await runGit(['--git-dir', dir, 'rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`]);
  return r.code === 0 ? r.stdout.toString().trim() : undefined;
}

function tagTaken(tag: string, other: string): NdsError {
  return new NdsError('version_exists', { message: `The repository's tag ${tag} already names commit ${other}; a version number is never reused.` });
}

/** Hashes every distinct blob once; the small ones are kept, to be read as possible pointers. */
async function hashBlobs(dir: string, files: TreeFile[]): Promise<Map<string, { sha256: string; small?: string }>> {
  const hashes = new Map<string, { sha256: string; small?: string }>();
  const oids = [...new Set(files.map((f) => f.oid))];
  await eachBlob(dir, oids, async (oid, size, body) => {
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    for await (const chunk of body) {
      hash.update(chunk as Buffer);
      if (size <= POINTER_MAX) kept.push(chunk as Buffer);
    }
    hashes.set(oid, { sha256: hash.digest('hex'), small: size <= POINTER_MAX ? Buffer.concat(kept).toString('utf8') : undefined });
  });
  return hashes;
}

/** The NODE_URL of another node holding `datasetId`'s repository; undefined when this node holds it or none does. */
export async function repositoryHeldElsewhere(deps: Pick<Deps, 'db' | 'config' | 'clock'>, datasetId: string): Promise<string | undefined> {
  const place = await locateRepository(deps, datasetId, false);
  return place.at === 'node' ? place.nodeUrl : undefined;
}

/** A size in MiB for a sentence (`100 MiB`, `4,096 MiB`, `0.5 MiB`). */
const inMiB = (bytes: number) => `${(bytes / 1024 ** 2).toLocaleString('en', { maximumFractionDigits: 1 })} MiB`;

/**
 * Refuses (`validation_failed`, naming each) a commit with a file larger than `limit` (MAX_GIT_FILE_BYTES) in
 * git itself. Git keeps a blob compressed and the store keeps its content whole: a file of zeros packs a
 * thousand to one, so a push of megabytes would write gigabytes here. Past the bound, content comes by upload
 * (pointers). Decided on the listing's sizes, before a blob is read: no pointer is larger than POINTER_MAX,
 * which is at most the setting's least value.
 */
export function refuseOversizedGitFiles(files: readonly TreeFile[], commit: string, limit: number): void {
  const oversized = files.filter((f) => f.size > limit);
  if (oversized.length === 0) return;
  throw new NdsError('validation_failed', {
    message: `Commit ${commit} holds files of more than ${inMiB(limit)} in git itself; such files must be git-lfs or git-annex pointers to content uploaded to nds (nds datasets upload makes them).`,
    details: oversized.slice(0, 100).map((f) => `${f.path}: ${f.size.toLocaleString('en')} bytes in git, more than ${limit.toLocaleString('en')} (${inMiB(limit)})`),
  });
}

export async function createVersionFromCommit(deps: Pick<Deps, 'db' | 'objects' | 'config' | 'clock'>, datasetId: string, input: VersionFromCommit): Promise<DatasetVersionRow> {
  if (!isSemver(input.version)) throw new NdsError('validation_failed', { details: ['version: a semantic version such as 1.0.0 or 1.1.0-rc.1'] });
  const taken = await deps.db.selectFrom('dataset_versions').select('version').where('dataset_id', '=', datasetId).where('version', '=', input.version).executeTakeFirst();
  if (taken) throw new NdsError('version_exists', { message: `Version ${input.version} of ${datasetId} already exists; a version number is never reused.` });
  const place = await locateRepository(deps, datasetId, false);
  // The route forwards a version of a repository held by another node there (`repositoryHeldElsewhere`).
  if (place.at === 'node') throw new NdsError('repository_unavailable', { message: `The repository of ${datasetId} is held by another node.` });
  if (place.at === 'none') throw new NdsError('conflict', { message: `${datasetId} has no hosted repository yet: push its tree to /git/${datasetId}.git first, or create the version from a manifest.` });
  const { dir } = place;
  const commit = await resolveCommit(dir, datasetId, input.commit);
  const tag = `v${input.version}`;
  const tagged = await tagTarget(dir, tag);
  if (tagged && tagged !== commit) throw tagTaken(tag, tagged);

  const { manifest, copies } = await commitContents(deps, datasetId, dir, commit);
  // Git keeps these files compressed, the store whole: their room is granted like an upload's before any is copied.
  await reserveCommitCopies(deps, datasetId, copies);
  await eachBlob(dir, [...copies.keys()], async (oid, size, body) => {
    const sha256 = copies.get(oid)!.sha256;
    await deps.objects.put(contentKey(datasetId, sha256), body, { sha256, contentLength: size });
    await recordStoredBytes(deps, datasetId, contentGrantKey(sha256), size);
  });

  // The tag is taken first and atomically (update-ref refuses an existing ref), so of two creations naming
  // different commits one loses; it is given back if the version itself is then refused.
  let created = false;
  if (!tagged) {
    const r = await runGit(['--git-dir', dir, 'update-ref', `refs/tags/${tag}`, commit, '']);
    if (r.code !== 0) {
      const now = await tagTarget(dir, tag);
      if (now !== commit) throw now ? tagTaken(tag, now) : new Error(`tagging ${commit} as ${tag} failed: ${r.stderr.trim()}`);
    } else {
      created = true;
    }
  }
  try {
    return await createVersion(deps, datasetId, { version: input.version, manifest, sourceCommit: commit, createdBy: input.createdBy, madeBy: input.madeBy, lastUnderLock: input.lastUnderLock });
  } catch (err) {
    if (created) await runGit(['--git-dir', dir, 'update-ref', '-d', `refs/tags/${tag}`, commit]);
    throw err;
  }
}

/** What a version of a commit is made of: its manifest, and the files kept in git itself whose content the store lacks (by blob id). */
interface CommitContents {
  manifest: ManifestEntry[];
  copies: Map<string, ManifestEntry>;
}

/**
 * Lists and hashes a commit's tree: the manifest of its version and the files a version would copy from git
 * into the store. Refuses a commit with a file past MAX_GIT_FILE_BYTES in git, and one whose pointers stand for
 * content not uploaded yet.
 */
async function commitContents(deps: Pick<Deps, 'objects' | 'config'>, datasetId: string, dir: string, commit: string): Promise<CommitContents> {
  const files = await listTree(dir, commit, deps.config.maxTreeFiles);
  refuseOversizedGitFiles(files, commit, deps.config.maxGitFileBytes);
  const hashes = await hashBlobs(dir, files);
  const plain = new Map<string, string>();
  const pointers = new Set<string>();
  const entries: ManifestEntry[] = files.map((f) => {
    const blob = hashes.get(f.oid)!;
    const pointer = blob.small === undefined ? undefined : pointerContent(f.mode, blob.small);
    if (pointer) {
      pointers.add(f.path);
      return { path: f.path, ...pointer };
    }
    plain.set(blob.sha256, f.oid);
    return { path: f.path, size: f.size, sha256: blob.sha256 };
  });
  const manifest = normalizeManifest(entries);

  const missing = await missingContent(deps, datasetId, manifest);
  const lacking = missing.filter((e) => pointers.has(e.path));
  if (lacking.length) {
    throw new NdsError('content_missing', {
      message: `Some files of commit ${commit} are annex or LFS pointers whose content is not in the object store yet; upload it first.`,
      details: lacking.slice(0, 100).map((e) => `${e.path}: ${contentKey(datasetId, e.sha256)} is not in the store`),
      extra: { missing: lacking.map((e) => e.path) },
    });
  }
  const copies = new Map(missing.filter((e) => !pointers.has(e.path)).map((e) => [plain.get(e.sha256)!, e]));
  return { manifest, copies };
}

/** Grants the room of the content a version copies from git (and of `more`), against the owner's quota. */
async function reserveCommitCopies(deps: Pick<Deps, 'db' | 'clock' | 'config'>, datasetId: string, copies: Map<string, ManifestEntry>, more: readonly ManifestEntry[] = []): Promise<void> {
  const grants = [...copies.values(), ...more].map((e) => ({ key: contentGrantKey(e.sha256), bytes: e.size }));
  await reserveStorage(deps, datasetId, grants, { expiresAt: new Date(deps.clock.now().getTime() + UPLOAD_URL_TTL_S * 1000) });
}

/**
 * Before nds commits on `main` itself (an annotation commit): grants the room the version of that commit will
 * need, the content of `commit` (the head it builds on) that a version copies from git, and the files the new
 * commit writes, so that a refusal comes before `main` moves. The version then asks for the same keys again,
 * which costs nothing more.
 */
export async function reserveForCommitOn(deps: Pick<Deps, 'db' | 'objects' | 'config' | 'clock'>, datasetId: string, dir: string, commit: string, written: readonly ManifestEntry[]): Promise<void> {
  const { copies } = await commitContents(deps, datasetId, dir, commit);
  await reserveCommitCopies(deps, datasetId, copies, written);
}
