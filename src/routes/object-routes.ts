/**
 * `/objects/<key>`: the object store through the nds server. It answers
 * - presigned URLs of the folder store (`?expires=..&sig=..`, with `size`/`sha256` for a PUT);
 * - prefix-scoped credentials (`Authorization: Bearer ndso_...`, from upload-/download-credentials), for
 *   either store;
 * - unsigned GETs of the public Zarr copy (`<dataset>/zarr/...`), open to anyone as docs/gateway.md says.
 * Anything else is refused with 403 `signature_invalid`. A PUT is stored only when its size and hash are
 * what was signed (content-addressed keys `<dataset>/objects/<sha256>` must hash to their name).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { NdsError } from '../core/errors.js';
import { route, type Route } from '../http/route.js';
import { checkObjectKey, ContentMismatchError } from '../objects/object-store.js';
import type { ObjectUrlSigner } from '../objects/object-url-signer.js';
import { readPrefixToken, tokenAllows, type TokenAccess } from '../objects/prefix-token.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { parseSingleRange } from '../objects/byte-range.js';

const PUBLIC_ZARR = /^(nd|sb)\d{6}\/zarr\//;
const CONTENT_KEY = /\/objects\/([0-9a-f]{64})$/;

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
    summary: 'Read an object (Range): the public Zarr copy for anyone, the rest with a signature or a credential',
    access: 'none',
    undocumented: true,
    handler: getObject,
  }),
];

async function putObject(c: Context<AppEnv>): Promise<Response> {
  const { objects, config } = c.var.deps;
  const key = keyOf(c);
  const signed = authorize(c, objectUrlSigner(config), key, 'write');
  const declared = Number(c.req.header('content-length'));
  const size = signed.size ?? (Number.isFinite(declared) && c.req.header('content-length') !== undefined ? declared : undefined);
  const sha256 = signed.sha256 ?? CONTENT_KEY.exec(key)?.[1] ?? c.req.header('x-nds-sha256')?.toLowerCase();
  const body = requestBody(c);
  if (!body) throw new NdsError('bad_request', { message: 'A PUT needs a body.' });
  // A content key already holds the bytes of its hash (checked when they were written): they stay, and the
  // body is not taken. An S3 store can only check a streamed body after writing it, so a wrong body would
  // otherwise replace good content before it was found out.
  const present = CONTENT_KEY.test(key) ? await objects.head(key) : undefined;
  if (present && present.size === size) {
    body.resume();
    return c.json({ key, size: present.size, etag: present.etag, present: true }, 200, { ETag: present.etag });
  }
  try {
    const info = await objects.put(key, body, {
      contentLength: size,
      sha256,
      contentType: c.req.header('content-type'),
    });
    return c.json({ key, size: info.size, etag: info.etag }, 200, { ETag: info.etag });
  } catch (err) {
    if (err instanceof ContentMismatchError) throw new NdsError('content_mismatch', { details: [err.message], cause: err });
    throw err;
  }
}

async function getObject(c: Context<AppEnv>): Promise<Response> {
  const { objects, config } = c.var.deps;
  const key = keyOf(c);
  if (!PUBLIC_ZARR.test(key)) authorize(c, objectUrlSigner(config), key, 'read');
  const info = await objects.head(key);
  if (!info) throw new NdsError('not_found', { message: `No object ${key}.` });
  const range = parseSingleRange(c.req.header('range'), info.size);
  if (range === 'unsatisfiable') {
    return c.body(null, 416, { 'Content-Range': `bytes */${info.size}` });
  }
  const found = await objects.get(key, range ?? undefined);
  if (!found) throw new NdsError('not_found', { message: `No object ${key}.` });
  const headers: Record<string, string> = {
    'Content-Type': info.contentType ?? 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    ETag: info.etag,
    'Content-Length': String(range ? range.end - range.start + 1 : info.size),
  };
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${info.size}`;
  return c.body(Readable.toWeb(found.body) as ReadableStream, range ? 206 : 200, headers);
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

interface Grant {
  size?: number;
  sha256?: string;
}

/** Checks the request's signature or bearer token for `access` to `key`; throws 403 otherwise. */
function authorize(c: Context<AppEnv>, signer: ObjectUrlSigner, key: string, access: TokenAccess): Grant {
  const nowS = Math.floor(c.var.deps.clock.now().getTime() / 1000);
  const bearer = /^Bearer\s+(ndso_\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
  if (bearer) {
    const claims = readPrefixToken(signer, bearer);
    if (!claims || !tokenAllows(claims, access, key, nowS)) throw new NdsError('signature_invalid');
    return {};
  }
  const q = c.req.query();
  if (q.sig && q.expires && /^\d+$/.test(q.expires)) {
    const claims = {
      method: access === 'write' ? ('PUT' as const) : ('GET' as const),
      key,
      expires: Number(q.expires),
      size: q.size !== undefined && /^\d+$/.test(q.size) ? Number(q.size) : undefined,
      sha256: q.sha256,
    };
    if (nowS < claims.expires && signer.verifyUrl(claims, q.sig)) return { size: claims.size, sha256: claims.sha256 };
  }
  throw new NdsError('signature_invalid');
}
