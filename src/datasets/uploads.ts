/**
 * Getting content into and out of a dataset's part of the object store:
 * - presigned PUT URLs (1 hour) for content-addressed objects `<id>/objects/<sha256>`, each bound to its
 *   size and hash, so the store refuses other bytes; content already there is answered `present`;
 * - prefix-scoped temporary credentials (`ndso_` tokens, `src/objects/prefix-token.ts`), honoured by the
 *   server's `/objects/<key>` routes for both stores. Upload credentials cover `<id>/objects/` only (there,
 *   every key must hash to its name), so a holder cannot rewrite manifests or the Zarr copy; download
 *   credentials cover `<id>/`;
 * - signed read URLs of one object (`readUrl`, for git-lfs downloads), served by the same routes.
 * Credentials and read URLs name the account they were minted for (null: anyone), and the routes honour a
 * read only while that account may still read the dataset (`dataset-access.ts` `mayStillRead`).
 */
import type { SignIn } from '../accounts/sign-in-of-credential.js';
import type { Deps } from '../deps.js';
import { mintPrefixToken, type TokenAccess } from '../objects/prefix-token.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { mapLimit } from '../core/map-limit.js';
import { contentKey, type ManifestEntry } from './manifest.js';
import { contentGrantKey, countStoredContent, reserveStorage } from './storage-quota.js';

export const UPLOAD_URL_TTL_S = 3600;
export const CREDENTIALS_TTL_S = 3600;

export type UploadTarget =
  | { path: string; status: 'present' }
  | { path: string; status: 'upload'; url: string; method: 'PUT'; headers: Record<string, string>; expires_at: string };

/**
 * A target for each file: `present`, or a presigned PUT. The room for the content to upload is granted
 * against the owner's storage quota first (`storage-quota.ts`): over it, nothing is signed.
 */
export async function uploadUrls(deps: Pick<Deps, 'objects' | 'db' | 'config' | 'clock'>, datasetId: string, files: ManifestEntry[]): Promise<UploadTarget[]> {
  // A content key always holds bytes of that hash (the store checks it), so the size settles it.
  const present = await mapLimit(files, 16, async (f) => (await deps.objects.head(contentKey(datasetId, f.sha256)))?.size === f.size);
  const expiresAt = new Date(deps.clock.now().getTime() + UPLOAD_URL_TTL_S * 1000);
  await countStoredContent(deps, datasetId, files.filter((_, i) => present[i]));
  await reserveStorage(deps, datasetId, files.filter((_, i) => !present[i]).map((f) => ({ key: contentGrantKey(f.sha256), bytes: f.size })), { expiresAt });
  return mapLimit(
    files.map((f, i) => ({ f, present: present[i] })),
    16,
    async ({ f, present }): Promise<UploadTarget> => {
      if (present) return { path: f.path, status: 'present' };
      const signed = await deps.objects.presignPut(contentKey(datasetId, f.sha256), { expiresIn: UPLOAD_URL_TTL_S, contentLength: f.size, sha256: f.sha256 });
      return { path: f.path, status: 'upload', url: signed.url, method: 'PUT', headers: signed.headers, expires_at: signed.expiresAt.toISOString() };
    },
  );
}

export interface ObjectCredentials {
  type: 'nds-object-token';
  access: TokenAccess;
  /** Keys the token covers start with this. */
  prefix: string;
  /** Send `Authorization: Bearer <token>` to `<endpoint><key>`. */
  token: string;
  endpoint: string;
  expires_at: string;
}

/**
 * Credentials for `userId` (null: anyone, for a public dataset read without signing in) under `signIn`, the
 * key or session that asked for them: they end with it.
 */
export function objectCredentials(deps: Pick<Deps, 'config' | 'clock'>, datasetId: string, access: TokenAccess, userId: number | null, signIn?: SignIn): ObjectCredentials {
  const expires = Math.floor(deps.clock.now().getTime() / 1000) + CREDENTIALS_TTL_S;
  const prefix = access === 'write' ? `${datasetId}/objects/` : `${datasetId}/`;
  const token = mintPrefixToken(objectUrlSigner(deps.config), { prefix, access, expires, user: userId, signIn });
  return { type: 'nds-object-token', access, prefix, token, endpoint: `${deps.config.publicUrl}/objects/`, expires_at: new Date(expires * 1000).toISOString() };
}

/**
 * A URL that reads one object of a dataset through this server's `/objects/` routes for `expiresIn` seconds,
 * while `userId` (null: anyone) may still read the dataset, through `signIn` when given. Never a store's own
 * presigned URL: an S3 URL could not be refused when the dataset becomes private.
 */
export function readUrl(deps: Pick<Deps, 'config' | 'clock'>, key: string, userId: number | null, expiresIn: number, signIn?: SignIn): { url: string; expiresAt: Date } {
  const expires = Math.floor(deps.clock.now().getTime() / 1000) + expiresIn;
  const sig = objectUrlSigner(deps.config).signUrl({ method: 'GET', key, expires, user: userId, signIn });
  const query = new URLSearchParams({ expires: String(expires), u: userId === null ? '-' : String(userId), ...(signIn === undefined ? {} : { si: signIn }), sig });
  return { url: `${deps.config.publicUrl}/objects/${key.split('/').map(encodeURIComponent).join('/')}?${query}`, expiresAt: new Date(expires * 1000) };
}
