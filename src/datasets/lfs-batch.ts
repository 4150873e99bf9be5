/**
 * The git-lfs batch API of a hosted repository (git-lfs `docs/api/batch.md`): a git-lfs client names objects
 * by SHA-256 and size, and gets for each a signed URL of the dataset's content object
 * `<id>/objects/<sha256>` (a read URL of this server for a download, the store's presigned PUT for an upload), the same object `nds datasets upload` fills and conversions read. Only the
 * `basic` transfer is offered; the object store checks every upload's size and hash, so a pointer can only
 * ever name its own bytes.
 */
import type { SignIn } from '../accounts/sign-in-of-credential.js';
import type { Deps } from '../deps.js';
import { contentKey } from './manifest.js';
import { mapLimit } from '../core/map-limit.js';
import { readUrl, UPLOAD_URL_TTL_S, uploadUrls } from './uploads.js';

export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';
export const LFS_URL_TTL_S = UPLOAD_URL_TTL_S;

export interface LfsObjectRequest {
  oid: string;
  size: number;
}

export interface LfsAction {
  href: string;
  header?: Record<string, string>;
  expires_in: number;
}

export interface LfsObjectAnswer {
  oid: string;
  size: number;
  authenticated?: boolean;
  actions?: { download?: LfsAction; upload?: LfsAction };
  error?: { code: number; message: string };
}

export interface LfsBatchAnswer {
  transfer: 'basic';
  objects: LfsObjectAnswer[];
  hash_algo: 'sha256';
}

/** Headers a client must send with a presigned request; `host` and `content-length` are its own to set. */
function actionHeaders(headers: Record<string, string>): Record<string, string> | undefined {
  const kept = Object.entries(headers).filter(([name]) => !['host', 'content-length'].includes(name.toLowerCase()));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/**
 * Download actions: a signed read URL of each stored object (served by this server, honoured while `userId`,
 * null for anyone, may still read the dataset, through the key `signIn` names); a 404 error for an object the
 * store lacks.
 */
export async function lfsDownloads(
  deps: Pick<Deps, 'objects' | 'config' | 'clock'>,
  datasetId: string,
  userId: number | null,
  objects: LfsObjectRequest[],
  signIn?: SignIn,
): Promise<LfsBatchAnswer> {
  const answers = await mapLimit(objects, 16, async ({ oid, size }): Promise<LfsObjectAnswer> => {
    const key = contentKey(datasetId, oid);
    const stored = await deps.objects.head(key);
    if (!stored) return { oid, size, error: { code: 404, message: `Object ${oid} is not stored for ${datasetId}.` } };
    if (stored.size !== size) return { oid, size, error: { code: 422, message: `Object ${oid} has ${stored.size} bytes, not ${size}.` } };
    const signed = readUrl(deps, key, userId, LFS_URL_TTL_S, signIn);
    return { oid, size, authenticated: true, actions: { download: { href: signed.url, expires_in: LFS_URL_TTL_S } } };
  });
  return { transfer: 'basic', objects: answers, hash_algo: 'sha256' };
}

/** Upload actions: a presigned PUT bound to the size and hash; none for an object already stored. */
export async function lfsUploads(deps: Pick<Deps, 'objects' | 'db' | 'config' | 'clock'>, datasetId: string, objects: LfsObjectRequest[]): Promise<LfsBatchAnswer> {
  const targets = await uploadUrls(
    deps,
    datasetId,
    objects.map((o) => ({ path: o.oid, size: o.size, sha256: o.oid })),
  );
  const answers = targets.map((t, i): LfsObjectAnswer => {
    const { oid, size } = objects[i]!;
    if (t.status === 'present') return { oid, size };
    return { oid, size, authenticated: true, actions: { upload: { href: t.url, header: actionHeaders(t.headers), expires_in: LFS_URL_TTL_S } } };
  });
  return { transfer: 'basic', objects: answers, hash_algo: 'sha256' };
}
