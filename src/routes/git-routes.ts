/**
 * Git smart HTTP for datasets' repositories: `<PUBLIC_URL>/git/<id>.git`. HTTP Basic with any user name and an
 * API key as the password (what `nds auth git-credential` answers). Read: anyone for a public dataset, the
 * owner and admins for a private one. Push: the owner.
 */
import type { Context } from 'hono';
import { assertAccountUsable, hasRole } from '../accounts/account-gates.js';
import { findApiKey } from '../accounts/api-keys.js';
import type { User } from '../db/accounts-tables.js';
import type { AppEnv } from '../http/app-env.js';
import { route, type Route } from '../http/route.js';
import { clientIp } from '../http/client-ip.js';
import { textProblem } from '../http/request-input.js';
import { NdsError } from '../core/errors.js';
import { runGitHttpBackend } from '../git/git-http-backend.js';
import { afterPush } from '../conversion/after-push.js';
import { findDatasetRow } from '../datasets/dataset-queries.js';
import { mainHead, repositoryForPush } from '../datasets/hosted-repository.js';
import { repositoryDir } from '../git/repository-dir.js';
import { existsSync } from 'node:fs';

const REPO = /^\/git\/((?:nd|sb)\d{6})\.git(\/.*)?$/;

function challenge(message: string): Response {
  return new Response(`${message}\n`, { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="nds", charset="UTF-8"', 'content-type': 'text/plain' } });
}

/** The user of the request's Basic (or Bearer) credentials; undefined for none; throws for bad ones. */
async function gitUser(c: Context<AppEnv>): Promise<User | undefined> {
  const header = c.req.header('authorization');
  if (!header) return undefined;
  let token: string | undefined;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    token = decoded.slice(decoded.indexOf(':') + 1);
  } else {
    token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  }
  const found = token ? await findApiKey(c.var.deps.db, token, c.var.deps.keyCache) : undefined;
  if (!found || found.user.status === 'revoked') throw new NdsError('unauthorized', { message: 'The API key is not valid or was revoked.' });
  assertAccountUsable(found.user);
  return found.user;
}

export const gitRoutes: Route[] = (['get', 'post'] as const).map((method) =>
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
);

async function serveGit(c: Context<AppEnv>): Promise<Response> {
  const m = REPO.exec(c.req.path);
  if (!m) throw new NdsError('not_found', { message: 'Repositories live at /git/<dataset id>.git.' });
  const [, datasetId, rest = '/'] = m;
  const { config } = c.var.deps;
  const query = new URL(c.req.url).search.slice(1);
  // Both go to git in its environment, where a NUL cannot be (and no git path has one).
  const problem = textProblem(rest) ?? textProblem(query);
  if (problem) throw new NdsError('validation_failed', { details: [`path: ${problem}`] });
  const pushing = rest === '/git-receive-pack' || /(^|&)service=git-receive-pack(&|$)/.test(query);

  let user: User | undefined;
  try {
    user = await gitUser(c);
  } catch (err) {
    if (err instanceof NdsError && err.status === 401) return challenge(err.message);
    throw err;
  }
  const dataset = await findDatasetRow(c.var.deps.db, datasetId);
  const isOwner = !!user && !!dataset && dataset.owner_id === user.id;
  const canRead = !!dataset && (dataset.visibility === 'public' || isOwner || (!!user && hasRole(user, 'admin')));
  if (!dataset || !canRead) {
    // Git asks for credentials only after a 401; a signed-in stranger gets the same 404 as for no dataset.
    if (!user) return challenge('Sign in to reach this repository.');
    throw new NdsError('dataset_not_found');
  }
  if (pushing && !isOwner) {
    if (!user) return challenge('Sign in to push.');
    throw new NdsError('forbidden', { message: 'Only the dataset owner may push.' });
  }

  let dir = repositoryDir(config.gitDir, datasetId);
  if (pushing) {
    dir = await repositoryForPush(c.var.deps, dataset);
  } else if (!existsSync(dir)) {
    throw new NdsError('not_found', { message: 'This dataset has no hosted repository yet; push to create it.' });
  }
  const before = rest === '/git-receive-pack' ? await mainHead(dir) : undefined;
  const deps = c.var.deps;
  return runGitHttpBackend({
    method: c.req.method,
    pathInfo: `/${datasetId}.git${rest}`,
    query,
    contentType: c.req.header('content-type'),
    contentEncoding: c.req.header('content-encoding'),
    body: c.req.raw.body,
    projectRoot: config.gitDir,
    remoteUser: user?.username,
    remoteAddr: clientIp(c),
    onExit: (code) => {
      if (rest !== '/git-receive-pack' || code !== 0) return;
      afterPush(deps, datasetId, dir, before).catch((err) => deps.log.error({ err, dataset: datasetId }, 'after-push handling failed'));
    },
  });
}
