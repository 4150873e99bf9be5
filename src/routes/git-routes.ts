/**
 * Git smart HTTP for datasets' repositories: `<PUBLIC_URL>/git/<id>.git`. HTTP Basic with any user name and an
 * API key as the password (what `nds auth git-credential` answers). Read: anyone for a public dataset, the
 * owner, its members and admins for a private one. Push: the owner and its maintainers (decision 0028). The git-lfs batch API of the same repositories
 * (`<id>.git/info/lfs/objects/batch`) takes the same credentials: download as read, upload as push.
 *
 * A repository lives on the disk of one node (decision 0026): any other node checks the caller first, exactly
 * as for its own repositories, then forwards the request to the holder, which checks it again. Conversion
 * workers read with a fetch credential (`datasets/git-fetch-credential.ts`): one dataset's repository,
 * upload-pack only.
 */
import { signInOf, type SignIn } from '../accounts/sign-in-of-credential.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Context } from 'hono';
import { assertAccountUsable } from '../accounts/account-gates.js';
import { allows, findDatasetAndStanding } from '../datasets/dataset-access.js';
import { findApiKey } from '../accounts/api-keys.js';
import type { User } from '../db/accounts-tables.js';
import type { AppEnv } from '../http/app-env.js';
import { route, type Route } from '../http/route.js';
import { clientIp, clientLimitKey } from '../http/client-ip.js';
import { textProblem } from '../http/request-input.js';
import { isNdsError, NdsError } from '../core/errors.js';
import { MAX_OBJECT_BYTES } from '../objects/object-store.js';
import { runGitHttpBackend } from '../git/git-http-backend.js';
import { PushCommandsRefused, takePushCommands } from '../git/push-commands.js';
import { pushBounds, pushBoundSettings } from '../git/push-bounds.js';
import { fetchBounds, UPLOAD_PACK_SETTINGS } from '../git/fetch-bounds.js';
import { releasedWithBody, type FetchSlot } from '../git/fetch-slots.js';
import { receiveHooksDir } from '../git/receive-checks.js';
import { afterPush } from '../conversion/after-push.js';
import { findDatasetRow } from '../datasets/dataset-queries.js';
import { locateRepository, mainHead, markHostedSource } from '../datasets/hosted-repository.js';
import { recordRepositoryBytes, releaseStorage, reserveUpTo } from '../datasets/storage-quota.js';
import { gitFetchCredentialReads, isGitFetchCredential } from '../datasets/git-fetch-credential.js';
import { forwardedBy, forwardToHolder } from '../http/holder-forwarding.js';
import { z } from '@hono/zod-openapi';
import type { DatasetRow } from '../db/datasets-tables.js';
import { LFS_MEDIA_TYPE, lfsDownloads, lfsUploads } from '../datasets/lfs-batch.js';

const REPO = /^\/git\/((?:nd|sb)\d{6})\.git(\/.*)?$/;
/** The most bytes of a push's command list (a thousand updates take about 100 KB). */
const PUSH_COMMANDS_MAX_BYTES = 4 * 1024 * 1024;

function challenge(message: string): Response {
  return new Response(`${message}\n`, { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="nds", charset="UTF-8"', 'content-type': 'text/plain' } });
}

/**
 * A refusal as git shows it: git prints the body of a failed request as `remote:` lines when it is plain text,
 * and nothing of any other (a JSON body left git saying only "The requested URL returned error: 429").
 */
function gitRefusal(err: NdsError): Response {
  return new Response(`${err.message}\n`, { status: err.status, headers: { ...err.headers, 'content-type': 'text/plain; charset=utf-8' } });
}

/**
 * The slot of a clone or fetch (decision 0059), or the answer refusing it. A request another node forwarded
 * was counted against its client there (here its address is that node's): it counts in all only. A request
 * forwarded from here counts against its client here, and in all on the node that runs its git.
 */
function takeFetchSlot(c: Context<AppEnv>, here: boolean): FetchSlot | Response {
  const client = here && forwardedBy(c) !== undefined ? undefined : clientLimitKey(c);
  try {
    return c.var.deps.gitFetches.take(client, here);
  } catch (err) {
    if (isNdsError(err, 'rate_limited') || isNdsError(err, 'service_unavailable')) return gitRefusal(err);
    throw err;
  }
}

/** Drops the client's connection: a clone that stalled is ended, and its client must not wait on for the rest. */
function dropConnection(c: Context<AppEnv>): void {
  (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.destroy();
}

/** The secret of the request's Basic (the password) or Bearer credentials; undefined for none. */
function presentedToken(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('authorization');
  if (!header) return undefined;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    return decoded.slice(decoded.indexOf(':') + 1);
  }
  return /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? '';
}

/** The user of the request's Basic (or Bearer) API key, and the key; undefined for none; throws for bad ones. */
async function gitUser(c: Context<AppEnv>): Promise<{ user: User; signIn: SignIn | undefined } | undefined> {
  const token = presentedToken(c);
  if (token === undefined) return undefined;
  // A fetch credential is no API key: where a user is asked for (push, git-lfs), it is refused as a bad one.
  const found = token && !isGitFetchCredential(token) ? await findApiKey(c.var.deps.db, token, c.var.deps.keyCache) : undefined;
  if (!found || found.user.status === 'revoked') throw new NdsError('unauthorized', { message: 'The API key is not valid or was revoked.' });
  assertAccountUsable(found.user);
  return { user: found.user, signIn: signInOf(found) };
}

/** Who is asking for a repository, once they may read it (and push, when `pushing`); or the answer refusing them. */
async function repositoryCaller(
  c: Context<AppEnv>,
  datasetId: string,
  pushing: boolean,
  refuse: (message: string) => Response,
): Promise<{ user: User | undefined; signIn: SignIn | undefined; dataset: DatasetRow } | Response> {
  let user: User | undefined;
  let signIn: SignIn | undefined;
  try {
    ({ user, signIn } = (await gitUser(c)) ?? {});
  } catch (err) {
    if (err instanceof NdsError && err.status === 401) return refuse(err.message);
    throw err;
  }
  // Found with the caller's standing in one statement: a private id costs what an unknown one does.
  const { dataset, standing } = await findDatasetAndStanding(c.var.deps.db, datasetId, user);
  if (!dataset || !allows(standing, 'read')) {
    // Git asks for credentials only after a 401; a signed-in stranger gets the same 404 as for no dataset.
    if (!user) return refuse('Sign in to reach this repository.');
    throw new NdsError('dataset_not_found');
  }
  // The owner and maintainers push (decision 0028); an administrator reads, as before.
  if (pushing && standing !== 'owner' && standing !== 'maintainer') {
    if (!user) return refuse('Sign in to push.');
    throw new NdsError('forbidden', { message: 'Only the dataset owner and its maintainers may push.' });
  }
  return { user, signIn, dataset };
}

/** git-lfs reads errors as JSON with a `message`; a 401 makes it ask git's credential helpers. */
function lfsChallenge(message: string): Response {
  return new Response(JSON.stringify({ error: 'unauthorized', message }), {
    status: 401,
    headers: { 'WWW-Authenticate': 'Basic realm="nds", charset="UTF-8"', 'LFS-Authenticate': 'Basic realm="nds"', 'content-type': LFS_MEDIA_TYPE },
  });
}

const LfsBatchRequest = z.object({
  operation: z.enum(['download', 'upload']),
  transfers: z.array(z.string().max(100)).max(20).optional(),
  ref: z.object({ name: z.string().max(1024) }).optional(),
  objects: z
    .array(z.object({ oid: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256: 64 lower-case hex digits'), size: z.number().int().min(0).max(MAX_OBJECT_BYTES) }))
    .min(1)
    .max(1000),
  hash_algo: z.string().max(32).optional(),
});

const lfsBatchRoute = route({
  method: 'post',
  path: '/git/:repo{(?:nd|sb)\\d{6}\\.git}/info/lfs/objects/batch',
  summary: 'git-lfs batch API: presigned download and upload URLs of content objects by SHA-256',
  // HTTP Basic with an API key, as git itself: checked by `repositoryCaller`.
  access: 'none',
  undocumented: true,
  body: { schema: LfsBatchRequest, maxBytes: 1024 * 1024, maxKeys: 5_000 },
  handler: async (c, { body }) => {
    const datasetId = c.req.param('repo')!.replace(/\.git$/, '');
    const uploading = body.operation === 'upload';
    const caller = await repositoryCaller(c, datasetId, uploading, lfsChallenge);
    if (caller instanceof Response) return caller;
    if (body.hash_algo !== undefined && body.hash_algo !== 'sha256') {
      return c.json({ error: 'conflict', message: `Objects are named by sha256, not ${body.hash_algo}.` }, 409, { 'content-type': LFS_MEDIA_TYPE });
    }
    try {
      const answer = uploading ? await lfsUploads(c.var.deps, caller.dataset.id, body.objects) : await lfsDownloads(c.var.deps, caller.dataset.id, caller.user?.id ?? null, body.objects, caller.signIn);
      return c.json(answer, 200, { 'content-type': LFS_MEDIA_TYPE });
    } catch (err) {
      // The batch API's own answer for no room (git-lfs prints the message).
      if (isNdsError(err, 'storage_quota_exceeded')) return c.json({ message: [err.message, ...err.detailsFor(caller.user)].join(' ') }, 507, { 'content-type': LFS_MEDIA_TYPE });
      throw err;
    }
  },
});

export const gitRoutes: Route[] = [lfsBatchRoute, ...(['get', 'post'] as const).map((method) =>
  route({
    method,
    path: '/git/*',
    summary: 'Git smart HTTP of the hosted repositories (`git http-backend`)',
    // HTTP Basic with an API key as the password, checked by `gitUser`: git needs its own 401 challenge.
    access: 'none',
    undocumented: true,
    rawBody: 'git pack data',
    handler: serveGit,
  }),
)];

/** How long a push's grant of room lasts if its process never reports its end (a crash): the sweep then drops it. */
const PUSH_GRANT_MS = 3600_000;

async function serveGit(c: Context<AppEnv>): Promise<Response> {
  const m = REPO.exec(c.req.path);
  if (!m) throw new NdsError('not_found', { message: 'Repositories live at /git/<dataset id>.git.' });
  const [, datasetId, rest = '/'] = m;
  // Of git-lfs, the batch API is served (its own route above); locking is not, and git-lfs reads a 404 so.
  if (rest.startsWith('/info/lfs/')) throw new NdsError('not_found', { message: 'This server offers the git-lfs batch API only (no file locking).' });
  const { config } = c.var.deps;
  const query = new URL(c.req.url).search.slice(1);
  // Both go to git in its environment, where a NUL cannot be (and no git path has one).
  const problem = textProblem(rest) ?? textProblem(query);
  if (problem) throw new NdsError('validation_failed', { details: [`path: ${problem}`] });
  // Read as git reads it: the query's `service` decoded (git http-backend decodes `%2D`), and any path that
  // names receive-pack. A run judged a read also has receive-pack turned off in git itself (below), so a request
  // read otherwise by git than here fails closed.
  const pushing = rest.includes('receive-pack') || new URLSearchParams(query).getAll('service').some((s) => s.includes('receive-pack'));

  const deps = c.var.deps;
  const token = presentedToken(c);
  const workerRead = token !== undefined && isGitFetchCredential(token) && !pushing;
  let user: User | undefined;
  let dataset: DatasetRow;
  if (workerRead) {
    // A conversion worker's read: its credential names this dataset, whatever its visibility.
    if (!gitFetchCredentialReads(config, token, datasetId, deps.clock.now())) return challenge('The fetch credential is not valid for this repository.');
    const found = await findDatasetRow(deps.db, datasetId);
    if (!found) throw new NdsError('dataset_not_found');
    dataset = found;
  } else {
    const caller = await repositoryCaller(c, datasetId, pushing, challenge);
    if (caller instanceof Response) return caller;
    ({ user, dataset } = caller);
  }

  const place = await locateRepository(deps, datasetId, pushing);
  if (place.at === 'none') throw new NdsError('not_found', { message: 'This dataset has no hosted repository yet; push to create it.' });
  // Clones and fetches run at most so many at once, per client and in all; a worker's are bounded by the
  // number of workers, and never refused (decision 0059).
  const slot = pushing || workerRead ? undefined : takeFetchSlot(c, place.at === 'here');
  if (slot instanceof Response) return slot;
  if (place.at === 'node') {
    if (!slot) return forwardToHolder(c, datasetId, place.nodeUrl);
    try {
      return releasedWithBody(await forwardToHolder(c, datasetId, place.nodeUrl), slot);
    } catch (err) {
      slot.release();
      throw err;
    }
  }
  const { dir } = place;
  if (pushing) await markHostedSource(deps, dataset);
  const receivesPack = rest === '/git-receive-pack';
  const before = receivesPack ? await mainHead(dir) : undefined;
  let body: ReadableStream<Uint8Array> | null = c.req.raw.body;
  let contentEncoding = c.req.header('content-encoding');
  if (receivesPack && body) {
    try {
      const taken = await takePushCommands(Readable.fromWeb(body as WebReadableStream), contentEncoding, { maxRefs: config.maxGitPushRefs, maxBytes: PUSH_COMMANDS_MAX_BYTES });
      body = Readable.toWeb(taken) as ReadableStream<Uint8Array>;
      contentEncoding = undefined;
    } catch (err) {
      if (err instanceof PushCommandsRefused) throw new NdsError('payload_too_large', { message: err.message });
      // The client went away, or sent gzip that is not: its fault, and nothing was done.
      throw new NdsError('bad_request', { message: "The push's body could not be read.", cause: err });
    }
  }
  // A push may send no more than the owner's storage quota leaves: that room is granted to the push while it
  // runs (so that pushes and uploads at once cannot each be given it), and git refuses a larger pack as it
  // arrives. Once git has exited, the repository counts by its size on disk and the push's grant is given back.
  const pushGrant = receivesPack ? `push/${randomBytes(8).toString('hex')}` : undefined;
  const room = pushGrant ? await reserveUpTo(deps, datasetId, pushGrant, config.maxGitPushBytes, new Date(deps.clock.now().getTime() + PUSH_GRANT_MS)) : config.maxGitPushBytes;
  if (room <= 0) throw new NdsError('storage_quota_exceeded', { details: [`the datasets of ${datasetId}'s owner have no storage left for a push`] });
  // Measured whatever git's exit: a receive-pack that moved refs and then failed to answer (its client gone)
  // kept what it took.
  const settlePush = async () => {
    await recordRepositoryBytes(deps, datasetId, dir);
    await releaseStorage(deps, datasetId, pushGrant!);
  };
  // A pack's objects may inflate to far more than it sends: each git of a push runs under limits, and the hook
  // of the receive refuses a blob or content past the bounds before any ref moves (decision 0054).
  const bounds = pushing ? pushBounds(config) : undefined;
  // A clone or fetch runs under limits too, with pack-objects' threads and memory bounded, and is ended when
  // its transfer stalls or takes too long: a client that stops reading would otherwise hold git for ever.
  const reading = pushing ? undefined : fetchBounds(config);
  try {
    return await runGitHttpBackend({
      method: c.req.method,
      pathInfo: `/${datasetId}.git${rest}`,
      query,
      contentType: c.req.header('content-type'),
      contentEncoding,
      body,
      projectRoot: config.gitDir,
      remoteUser: user?.username,
      remoteAddr: clientIp(c),
      // index-pack stops a pack past the limit as it arrives ("pack exceeds maximum allowed size"): nothing of it
      // stays. A pack is kept as it came (unpackLimit 1): unpack-objects would write each of a small pack's deltas
      // out whole, a hundred times the bytes sent.
      config: bounds ? { 'receive.maxInputSize': String(room), 'receive.unpackLimit': '1', ...pushBoundSettings(bounds) } : { 'http.receivepack': 'false', ...UPLOAD_PACK_SETTINGS },
      hooksDir: receivesPack ? await receiveHooksDir(config.gitDir) : undefined,
      limits: bounds?.process ?? reading?.process,
      stallMs: reading?.stallMs,
      maxMs: reading?.maxMs,
      onAbandoned: (why) => {
        deps.log.info({ dataset: datasetId, why }, 'a git clone or fetch was ended');
        dropConnection(c);
      },
      onExit: () => {
        slot?.release();
        if (!pushGrant) return;
        settlePush().catch((err) => deps.log.error({ err, dataset: datasetId }, "recording the repository's size after a push failed"));
        // Whatever git's exit, as above: afterPush does nothing unless `main` moved.
        afterPush(deps, datasetId, dir, before).catch((err) => deps.log.error({ err, dataset: datasetId }, 'after-push handling failed'));
      },
    });
  } catch (err) {
    // git never ran: its push's grant is given back here (once it has run, its end gives it back).
    slot?.release();
    if (pushGrant) await releaseStorage(deps, datasetId, pushGrant).catch(() => undefined);
    throw err;
  }
}
