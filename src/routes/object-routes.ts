/**
 * `/objects/<key>`: the object store through the nds server. It answers
 * - presigned URLs of the folder store (`?expires=..&sig=..`, with `size` and `sha256` or `crc32` for a PUT);
 * - prefix-scoped credentials (`Authorization: Bearer ndso_...`, from upload-/download-credentials), for
 *   either store;
 * - signed read URLs of one object (`?expires=..&u=..&sig=..`, git-lfs downloads) and read grants
 *   (`Authorization: Bearer ndsg...`, the Zarr copy only);
 * - unsigned GETs of the Zarr copy (`<dataset>/zarr/...`): open to anyone for a public dataset, to its owner
 *   and admins (API key or browser session) for a private or sandbox one.
 * A read of a dataset's object is honoured only while the account the credential was minted for (or the
 * caller) may read the dataset now (`mayStillRead`). A Zarr copy nobody here may read answers exactly as an
 * unknown id's (404); any other refused read or write answers 403 `signature_invalid`. A PUT is stored only
 * when its size and hash are what was signed (content-addressed keys `<dataset>/objects/<sha256>` must hash
 * to their name).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { NdsError } from '../core/errors.js';
import { mayStillRead, mayStillUpload } from '../datasets/dataset-access.js';
import { readGrantClaims, readGrantOf } from '../datasets/read-grant.js';
import { contentGrantKey, holdGrantWhileWriting, recordStoredBytes, releaseStorage, reserveStorage, restoreGrant } from '../datasets/storage-quota.js';
import { CREDENTIALS_TTL_S } from '../datasets/uploads.js';
import { resolveCaller } from '../http/auth.js';
import { route, type Route } from '../http/route.js';
import { checkObjectKey, ContentMismatchError, MAX_OBJECT_BYTES, MultipartUploadGoneError } from '../objects/object-store.js';
import type { ObjectUrlSigner } from '../objects/object-url-signer.js';
import { readPrefixToken, tokenAllows, type TokenAccess } from '../objects/prefix-token.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { parseSingleRange } from '../objects/byte-range.js';

/** A dataset's key: its id, and whether the key is in its Zarr copy. */
const DATASET_KEY = /^((?:nd|sb)\d{6})\/(zarr\/)?/;
/** A content key, `<dataset>/objects/<sha256>`: the dataset's id, and the hash its bytes must have. */
const CONTENT_KEY = /^((?:nd|sb)\d{6})\/objects\/([0-9a-f]{64})$/;
/**
 * How long the grant of a write under way is kept: longer than any upload is expected to last; the end of the
 * write records or gives back the room, and only a server that died meanwhile leaves it to the sweep.
 */
const WRITE_HOLD_MS = 24 * 60 * 60 * 1000;

export const objectRoutes: Route[] = [
  route({
    method: 'put',
    path: '/objects/*',
    summary: 'Store an object through a presigned URL or a prefix credential; its size and SHA-256 are checked as it arrives',
    // Signed URLs and `ndso_` credentials, checked by `authorize` below.
    access: 'none',
    undocumented: true,
    rawBody: 'the object, as long as the signature or Content-Length declares',
    handler: putObject,
  }),
  route({
    method: 'get',
    path: '/objects/*',
    summary: "Read an object (Range): a public dataset's Zarr copy for anyone, the rest with a signature, a credential or a read grant",
    access: 'none',
    undocumented: true,
    handler: getObject,
  }),
];

async function putObject(c: Context<AppEnv>): Promise<Response> {
  const { objects, config } = c.var.deps;
  const key = keyOf(c);
  const signed = await authorizeWrite(c, objectUrlSigner(config), key);
  const declared = Number(c.req.header('content-length'));
  const size = signed.size ?? (Number.isFinite(declared) && c.req.header('content-length') !== undefined ? declared : undefined);
  const content = CONTENT_KEY.exec(key);
  const sha256 = signed.sha256 ?? content?.[2] ?? c.req.header('x-nds-sha256')?.toLowerCase();
  const body = requestBody(c);
  if (!body) throw new NdsError('bad_request', { message: 'A PUT needs a body.' });
  // A content key already holds the bytes of its hash (checked when they were written): they stay, and the
  // body is never handed to the store, whatever it holds.
  const present = content ? await objects.head(key) : undefined;
  if (present) {
    body.resume();
    if (size !== undefined && size !== present.size) {
      throw new NdsError('content_mismatch', { details: [`${key} is stored with ${present.size} bytes, the bytes of its SHA-256; a body of ${size} bytes cannot be them, and stored content is never replaced`] });
    }
    return c.json({ key, size: present.size, etag: present.etag, present: true }, 200, { ETag: present.etag });
  }
  const grant = content ? { datasetId: content[1], key: contentGrantKey(content[2]) } : undefined;
  // A presigned URL's room was granted when it was signed; a credential's write is granted here, before its
  // body is read, so its length must be known (S3 asks the same of a PUT).
  let granted: { expiresAt: Date; first: boolean } | undefined;
  try {
    if (size !== undefined && size > MAX_OBJECT_BYTES) {
      throw new NdsError('payload_too_large', { message: `An object has at most ${MAX_OBJECT_BYTES} bytes (5 TiB).`, extra: { limit_bytes: MAX_OBJECT_BYTES } });
    }
    if (signed.viaCredential && grant) {
      if (size === undefined) throw new NdsError('length_required', { message: 'A PUT through an object credential must send Content-Length.' });
      // Kept while the body arrives, however long (given back at once if the write fails).
      const expiresAt = new Date(c.var.deps.clock.now().getTime() + Math.max(CREDENTIALS_TTL_S * 1000, WRITE_HOLD_MS));
      granted = { expiresAt, first: (await reserveStorage(c.var.deps, grant.datasetId, [{ key: grant.key, bytes: size }], { expiresAt })).length > 0 };
    }
  } catch (err) {
    body.resume();
    throw err;
  }
  // A body may take hours to arrive: its grant is kept meanwhile, past the sweep of URLs that expired unused.
  const heldUntil = new Date(c.var.deps.clock.now().getTime() + WRITE_HOLD_MS);
  const heldFrom = grant && !granted ? await holdGrantWhileWriting(c.var.deps, grant.datasetId, grant.key, heldUntil) : undefined;
  try {
    const info = await objects.put(key, body, {
      contentLength: size,
      sha256,
      crc32: signed.crc32,
      contentType: c.req.header('content-type'),
    });
    // Stored through this server: counted from now on, whatever became of the grant meanwhile.
    if (grant) await recordStoredBytes(c.var.deps, grant.datasetId, grant.key, info.size);
    return c.json({ key, size: info.size, etag: info.etag }, 200, { ETag: info.etag });
  } catch (err) {
    // Nothing was stored: room this write was the first to take is given back at once, not after the sweep.
    if (grant && granted?.first) await releaseStorage(c.var.deps, grant.datasetId, grant.key, granted.expiresAt).catch(() => undefined);
    if (grant && heldFrom) await restoreGrant(c.var.deps, grant.datasetId, grant.key, heldUntil, heldFrom).catch(() => undefined);
    if (err instanceof ContentMismatchError) throw new NdsError('content_mismatch', { details: [err.message], cause: err });
    // A part of an upload in parts that was completed or aborted meanwhile (folder store).
    if (err instanceof MultipartUploadGoneError) {
      body.resume();
      throw new NdsError('upload_not_found', { cause: err });
    }
    throw err;
  }
}

async function getObject(c: Context<AppEnv>): Promise<Response> {
  const { objects } = c.var.deps;
  const key = keyOf(c);
  const reach = await authorizeRead(c, key);
  const info = await objects.head(key);
  if (!info) throw noObject(key);
  const range = parseSingleRange(c.req.header('range'), info.size);
  // What only some may read is never kept by a shared cache (a session cookie does not stop one).
  const privacy: Record<string, string> = reach === 'credentialed' ? { 'Cache-Control': 'private, no-store' } : {};
  if (range === 'unsatisfiable') {
    return c.body(null, 416, { 'Content-Range': `bytes */${info.size}`, ...privacy });
  }
  const found = await objects.get(key, range ?? undefined);
  if (!found) throw noObject(key);
  const headers: Record<string, string> = {
    'Content-Type': info.contentType ?? 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    ETag: info.etag,
    'Content-Length': String(range ? range.end - range.start + 1 : info.size),
    ...privacy,
  };
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${info.size}`;
  return c.body(Readable.toWeb(found.body) as ReadableStream, range ? 206 : 200, headers);
}

function noObject(key: string): NdsError {
  return new NdsError('not_found', { message: `No object ${key}.` });
}

/**
 * Lets a read through, saying whether anyone may read the object (`public`: a public dataset's copy) or only
 * this request's credential or caller; or throws what an unknown id gets: for a Zarr copy the 404 of a
 * missing object (so a private copy cannot be told from no copy), for anything else 403 `signature_invalid`.
 */
async function authorizeRead(c: Context<AppEnv>, key: string): Promise<'public' | 'credentialed'> {
  const { db, objectVisibility } = c.var.deps;
  const [, datasetId, copy] = DATASET_KEY.exec(key) ?? [];
  const inCopy = copy !== undefined;
  // The public copy first: no credential is looked at, nothing is queried once the answer is remembered.
  if (datasetId !== undefined && inCopy && (await objectVisibility.isPublic(datasetId))) return 'public';
  const reader = await readerOf(c, key, datasetId, inCopy);
  const refused = () => (inCopy ? noObject(key) : new NdsError('signature_invalid'));
  if (reader === undefined) throw refused();
  // A key of no dataset (none is written today) is read with a signature alone, as the store signed it.
  if (datasetId === undefined) return 'credentialed';
  if (reader.user === undefined || !(await mayStillRead(db, datasetId, reader.user, reader.signIn, c.var.deps.clock.now()))) throw refused();
  return 'credentialed';
}

/**
 * Who reads: the account a valid credential for this key was minted for (null: anyone) and the sign-in it was
 * minted under, or the signed-in caller for a Zarr copy. `user` is undefined for a valid signature bound to
 * no account (a store's own presigned URL), which reads no dataset's object. Undefined when the request
 * carries nothing valid for this key: a bad credential reads as none, whatever the dataset, so it tells
 * nothing about it.
 */
async function readerOf(
  c: Context<AppEnv>,
  key: string,
  datasetId: string | undefined,
  inCopy: boolean,
): Promise<{ user: number | null | undefined; signIn?: string } | undefined> {
  const { config, clock } = c.var.deps;
  const signer = objectUrlSigner(config);
  const nowS = Math.floor(clock.now().getTime() / 1000);
  const authorization = c.req.header('authorization');
  const bearer = /^Bearer\s+(ndso_\S+)$/i.exec(authorization ?? '')?.[1];
  if (bearer) {
    const claims = readPrefixToken(signer, bearer);
    return claims && tokenAllows(claims, 'read', key, nowS) ? { user: claims.user, signIn: claims.signIn } : undefined;
  }
  const grant = readGrantOf(authorization);
  if (grant) {
    const claims = readGrantClaims(config, grant, clock.now());
    return claims && inCopy && claims.datasetId === datasetId ? { user: claims.user, signIn: claims.signIn } : undefined;
  }
  const q = c.req.query();
  if (q.sig) {
    const user = q.u === undefined ? undefined : q.u === '-' ? null : /^[1-9]\d{0,15}$/.test(q.u) ? Number(q.u) : NaN;
    if (Number.isNaN(user) || !q.expires || !/^\d+$/.test(q.expires)) return undefined;
    const claims = { method: 'GET' as const, key, expires: Number(q.expires), user, signIn: q.si };
    return nowS < claims.expires && signer.verifyUrl(claims, q.sig) ? { user, signIn: q.si } : undefined;
  }
  if (!inCopy) return undefined;
  try {
    await resolveCaller(c, 'optional');
  } catch {
    // A bad or revoked key, a session of a locked account: read as no one.
    return undefined;
  }
  return c.var.caller ? { user: c.var.caller.user.id } : undefined;
}

/**
 * The request body as a Node stream. Under @hono/node-server the socket's own `IncomingMessage` is used
 * directly: going through the web `ReadableStream` and back costs more than the hashing and the disk write
 * of an upload together.
 */
function requestBody(c: Context<AppEnv>): Readable | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming instanceof Readable && !incoming.readableEnded && c.req.header('content-length') !== '0') return incoming;
  const web = c.req.raw.body;
  return web ? Readable.fromWeb(web as import('node:stream/web').ReadableStream) : undefined;
}

function keyOf(c: Context<AppEnv>): string {
  const raw = c.req.path.slice('/objects/'.length);
  let key: string;
  try {
    key = raw.split('/').map(decodeURIComponent).join('/');
    checkObjectKey(key);
  } catch {
    throw new NdsError('bad_request', { message: 'That is not a valid object key.' });
  }
  return key;
}

interface WriteGrant {
  /** Through an `ndso_` credential (any key under its prefix), not a URL signed for this key. */
  viaCredential?: boolean;
  size?: number;
  sha256?: string;
  crc32?: string;
}

/** Checks the request's signature or write credential for `key`; throws 403 otherwise. */
async function authorizeWrite(c: Context<AppEnv>, signer: ObjectUrlSigner, key: string): Promise<WriteGrant> {
  const nowS = Math.floor(c.var.deps.clock.now().getTime() / 1000);
  const bearer = /^Bearer\s+(ndso_\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
  if (bearer) {
    const claims = readPrefixToken(signer, bearer);
    if (!claims || !tokenAllows(claims, 'write' satisfies TokenAccess, key, nowS)) throw new NdsError('signature_invalid');
    // Upload credentials die with their holder's right to upload (a member removed, an account revoked).
    if (!(await mayStillUpload(c.var.deps.db, DATASET_KEY.exec(key)?.[1] ?? '', claims.user, claims.signIn, c.var.deps.clock.now()))) throw new NdsError('signature_invalid');
    return { viaCredential: true };
  }
  const q = c.req.query();
  if (q.sig && q.expires && /^\d+$/.test(q.expires)) {
    const claims = {
      method: 'PUT' as const,
      key,
      expires: Number(q.expires),
      size: q.size !== undefined && /^\d+$/.test(q.size) ? Number(q.size) : undefined,
      sha256: q.sha256,
      crc32: q.crc32,
    };
    if (nowS < claims.expires && signer.verifyUrl(claims, q.sig)) return { size: claims.size, sha256: claims.sha256, crc32: claims.crc32 };
  }
  throw new NdsError('signature_invalid');
}
