/**
 * The administrators' page, `/admin`: open requests for upload access and for publication, each with Approve
 * and Deny (a denial needs a reason, which the requester gets by mail), the recordings a publication request
 * would publish unconverted, recent conversion failures, and the accounts. Plain forms posting to the
 * service's own origin; no script. To anyone but a signed-in administrator every path of it answers exactly
 * as a path no route takes.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { assertAccountUsable } from '../accounts/account-gates.js';
import { listUsers } from '../accounts/admin-users.js';
import { denyUploadAccess, grantUploadAccess, pendingUploadAccessRequests } from '../accounts/upload-access.js';
import { NdsError } from '../core/errors.js';
import type { User } from '../db/accounts-tables.js';
import { isAdmin } from '../datasets/dataset-access.js';
import { listDatasetsWithConversionFailures } from '../datasets/dataset-queries.js';
import { approvePublication, denyPublication, listPublicationRequests, type PublicationRequestView } from '../datasets/publication.js';
import { readConversionFailures } from '../formats/zarr/conversion-failures.js';
import type { AppEnv } from '../http/app-env.js';
import { clientIp } from '../http/client-ip.js';
import { unknownRoute } from '../http/error-handler.js';
import { FormFields } from '../http/form-input.js';
import { DEFAULT_BODY_BYTES, DEFAULT_BODY_KEYS, readBody, readParams, readQuery, validate } from '../http/request-input.js';
import { route, type Route } from '../http/route.js';
import { zarrState } from './dataset-cards.js';
import { html, type SafeHtml } from './html.js';
import { okNotice, pageSession, renderPage, requireOwnOrigin } from './page-kit.js';

/** Most accounts, failing datasets and failures of one dataset the page lists. */
const USERS_SHOWN = 100;
const FAILING_SHOWN = 20;
const FAILURES_SHOWN = 5;

const day = (d: Date | string | null) => (d ? new Date(d).toISOString().slice(0, 16).replace('T', ' ') : '–');

/** What a decision did, by the word the redirect carries; a fixed sentence, never text from the URL. */
const DONE: Record<string, string> = {
  'access-approved': 'Upload access is granted; the requester is told by mail.',
  'access-denied': 'The request for upload access is denied; the requester gets your reason by mail.',
  'publication-approved': 'The publication is approved: the dataset is public with its DOI, and the owner is told by mail.',
  'publication-denied': 'The publication request is denied; the owner gets your reason by mail.',
};

/** The signed-in, usable administrator of this browser; `undefined` for anyone else. */
async function administrator(c: Context<AppEnv>): Promise<User | undefined> {
  const session = await pageSession(c);
  if (!session || !isAdmin(session.user)) return undefined;
  try {
    assertAccountUsable(session.user);
    return session.user;
  } catch {
    return undefined;
  }
}

/** A deny form: it needs a reason, which goes to the requester. Behind a disclosure, so a slip of the mouse denies nothing. */
function denyForm(action: string, label: string): SafeHtml {
  return html`<details><summary>Deny…</summary>
<form class="stack wide" method="post" action="${action}">
<label>Reason (the requester reads it)<textarea name="reason" maxlength="2000" required rows="3"></textarea></label>
<button class="danger" type="submit" aria-label="Deny ${label}">Deny</button>
</form></details>`;
}

function accessSection(requests: User[]): SafeHtml {
  const items = requests.map(
    (u) => html`<div class="request" data-username="${u.username}">
<h3>${u.username} <span class="muted">${u.email}</span></h3>
<p class="muted">asked on ${day(u.upload_access_requested_at)} · account since ${day(u.created_at)}</p>
<div class="decide">
<form class="inline" method="post" action="/admin/requests/upload-access/${u.username}/approve"><button type="submit" aria-label="Approve ${u.username}">Approve</button></form>
${denyForm(`/admin/requests/upload-access/${u.username}/deny`, u.username)}
</div></div>`,
  );
  return html`<section class="card" id="upload-access"><h2>Upload-access requests (${requests.length})</h2>
${requests.length ? items : html`<p class="muted">No open request.</p>`}</section>`;
}

function failureList(failures: ReadonlyArray<{ path: string; code: string; reason: string }>): SafeHtml {
  const shown = failures.slice(0, FAILURES_SHOWN);
  return html`<ul class="failures">${shown.map((f) => html`<li><span class="mono">${f.path}</span>: ${f.code}: ${f.reason}</li>`)}${failures.length > shown.length ? html`<li>and ${failures.length - shown.length} more</li>` : ''}</ul>`;
}

function publicationSection(requests: PublicationRequestView[]): SafeHtml {
  const items = requests.map((r) => {
    const failed = r.failed_recordings ?? [];
    return html`<div class="request" data-request="${r.id}">
<h3>Request ${r.id}: <a href="/datasets/${r.dataset_id}">${r.dataset_name}</a> <span class="mono muted">${r.dataset_id}</span> v${r.version}</h3>
<p class="muted">asked by ${r.requested_by_username ?? 'a deleted account'} on ${day(r.requested_at)}</p>
${r.message ? html`<p>“${r.message}”</p>` : ''}
${failed.length ? html`<div class="notice error" role="alert">${failed.length} recording${failed.length === 1 ? '' : 's'} of this dataset could not be converted:${failureList(failed)}</div>` : ''}
<div class="decide">
<form class="inline" method="post" action="/admin/requests/publication/${r.id}/approve"><button type="submit" aria-label="Approve request ${r.id}">Approve</button></form>
${denyForm(`/admin/requests/publication/${r.id}/deny`, `request ${r.id}`)}
</div></div>`;
  });
  return html`<section class="card" id="publication"><h2>Publication requests (${requests.length})</h2>
${requests.length ? items : html`<p class="muted">No open request.</p>`}</section>`;
}

async function failuresSection(c: Context<AppEnv>): Promise<SafeHtml> {
  const { deps } = c.var;
  const failing = await listDatasetsWithConversionFailures(deps.db, FAILING_SHOWN);
  const rows: SafeHtml[] = [];
  for (const d of failing) {
    const failures = (await readConversionFailures(deps, d.id)) ?? [];
    rows.push(html`<tr><td><a href="/datasets/${d.id}">${d.name}</a><br><span class="mono muted">${d.id}</span> · ${d.owner_username}</td>
<td>${zarrState(d)}<br><span class="muted">${day(d.zarr_converted_at)}</span></td>
<td>${failures.length ? failureList(failures) : html`<span class="muted">the conversion failed as a whole: <code>npx nds admin zarr status ${d.id}</code></span>`}</td></tr>`);
  }
  return html`<section class="card" id="conversion-failures"><h2>Recent conversion failures</h2>
${rows.length ? html`<div class="table-scroll"><table><thead><tr><th>Dataset</th><th>Zarr copy</th><th>Recordings not converted</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p class="muted">None.</p>`}</section>`;
}

async function usersSection(c: Context<AppEnv>): Promise<SafeHtml> {
  const { users, total } = await listUsers(c.var.deps.db, { limit: USERS_SHOWN, offset: 0 });
  const rows = users.map((u) => html`<tr><td>${u.username}</td><td>${u.email}</td><td>${u.status}</td><td>${u.role}</td><td>${u.kind}</td><td>${day(u.created_at)}</td></tr>`);
  return html`<section class="card" id="users"><h2>Accounts (${total})</h2>
<div class="table-scroll"><table><thead><tr><th>Username</th><th>Email</th><th>Status</th><th>Role</th><th>Kind</th><th>Created</th></tr></thead><tbody>${rows}</tbody></table></div>
${total > users.length ? html`<p class="muted">The first ${users.length} are listed: <code>npx nds admin users list --limit 500</code> lists more.</p>` : ''}</section>`;
}

async function adminPage(c: Context<AppEnv>, user: User, notices: Array<SafeHtml | string>, status: ContentfulStatusCode = 200): Promise<Response> {
  const { deps } = c.var;
  const [access, publication] = await Promise.all([pendingUploadAccessRequests(deps.db), listPublicationRequests(deps, 'pending', 500)]);
  const body = html`<h1>Administration</h1>
${notices}
${accessSection(access)}
${publicationSection(publication.reverse())}
${await failuresSection(c)}
${await usersSection(c)}`;
  return renderPage(c, 'Administration', body, user.username, status);
}

/**
 * The routes of this page read nothing of the request before they know the caller is an administrator
 * (`rawTarget`, `rawBody`): a malformed query or body from anyone else gets the unknown path's answer too,
 * not a refusal that would tell the page exists. The handler reads the input itself afterwards.
 */
const unseen = { access: 'page', undocumented: true, rawTarget: true, rawBody: 'a form, read once the caller is known to be an administrator' } as const;

/** Runs a decision of the page for an administrator: on success back to the page with its notice, on a refusal the page with the reason. */
function decision(path: string, act: (c: Context<AppEnv>, admin: User, target: string, reason: string | undefined) => Promise<string>, needsReason: boolean): Route {
  return route({
    method: 'post',
    path,
    summary: "The administrators' page: a decision on a request",
    ...unseen,
    handler: async (c) => {
      const admin = await administrator(c);
      if (!admin) return unknownRoute(c);
      requireOwnOrigin(c);
      readParams(c);
      const raw = await readBody(c, ['form'], { maxBytes: DEFAULT_BODY_BYTES, maxKeys: DEFAULT_BODY_KEYS });
      const body = raw === undefined ? undefined : validate(FormFields, raw, 'body');
      const reason = body?.reason?.trim().slice(0, 2000);
      try {
        if (needsReason && !reason) throw new NdsError('validation_failed', { message: 'A denial needs a reason: the requester reads it.' });
        const done = await act(c, admin, c.req.param('target')!, reason);
        return c.redirect(`/admin?done=${done}`, 303);
      } catch (err) {
        if (!(err instanceof NdsError)) throw err;
        const notice = html`<div class="notice error" role="alert">${err.message}${err.details?.length ? html`<ul>${err.details.map((d) => html`<li>${d}</li>`)}</ul>` : ''}</div>`;
        return adminPage(c, admin, [notice], err.status === 404 ? 404 : 409);
      }
    },
  });
}

const requestId = (target: string) => {
  const id = Number(target);
  if (!Number.isSafeInteger(id) || id <= 0) throw new NdsError('request_not_found', { message: `No publication request ${target}.` });
  return id;
};
const actor = (c: Context<AppEnv>, user: User) => ({ user, ip: clientIp(c) });

export const adminPages: Route[] = [
  route({
    method: 'get',
    path: '/admin',
    summary: "The administrators' page: open requests, conversion failures, accounts",
    ...unseen,
    handler: async (c) => {
      const admin = await administrator(c);
      if (!admin) return unknownRoute(c);
      const done = readQuery(c).done;
      return adminPage(c, admin, [okNotice(typeof done === 'string' ? DONE[done] : undefined)]);
    },
  }),
  decision('/admin/requests/upload-access/:target/approve', async (c, admin, username) => {
    await grantUploadAccess(c.var.deps, actor(c, admin), username);
    return 'access-approved';
  }, false),
  decision('/admin/requests/upload-access/:target/deny', async (c, admin, username, reason) => {
    await denyUploadAccess(c.var.deps, actor(c, admin), username, reason!);
    return 'access-denied';
  }, true),
  decision('/admin/requests/publication/:target/approve', async (c, admin, target) => {
    await approvePublication(c.var.deps, actor(c, admin), requestId(target));
    return 'publication-approved';
  }, false),
  decision('/admin/requests/publication/:target/deny', async (c, admin, target, reason) => {
    await denyPublication(c.var.deps, actor(c, admin), requestId(target), reason!);
    return 'publication-denied';
  }, true),
];
