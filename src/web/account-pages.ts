/**
 * The account pages: `/account` (the account, its live keys with revoke, a new named key, sign out), and the
 * sign-in and device pages mounted beside it. They work without JavaScript: forms post form bodies, and the
 * answers are redirects back to a page.
 */
import type { Context } from 'hono';
import { assertAccountUsable } from '../accounts/account-gates.js';
import { listLiveApiKeys, mintApiKey, revokeApiKey, type MintedKey } from '../accounts/api-keys.js';
import { requestUploadAccess } from '../accounts/upload-access.js';
import { FormFields, withQuery } from '../http/form-input.js';
import { route, type Route } from '../http/route.js';
import type { User } from '../db/accounts-tables.js';
import type { AppEnv } from '../http/app-env.js';
import { heldText } from '../core/byte-size.js';
import { NdsError } from '../core/errors.js';
import { storageUseOf, type StorageUse } from '../datasets/storage-quota.js';
import { html, type SafeHtml } from './html.js';
import { errorNotice, okNotice, pageSession, renderPage, requireOwnOrigin, signInFirst, verifyFirst } from './page-kit.js';

const day = (iso: Date | string | null) => (iso ? new Date(iso).toISOString().slice(0, 16).replace('T', ' ') : 'never');

async function accountBody(c: Context<AppEnv>, user: User, notices: Array<SafeHtml | string>, minted?: MintedKey) {
  const keys = await listLiveApiKeys(c.var.deps.db, user.id);
  const rows = keys.map(
    (k) => html`<tr><td>${k.name}</td><td class="mono">${k.prefix}</td><td>${day(k.created_at)}</td><td>${day(k.last_used_at)}</td>
<td><form class="inline" method="post" action="/account/keys/${k.id}/revoke"><button class="danger" type="submit" aria-label="Revoke ${k.name}">Revoke</button></form></td></tr>`,
  );
  const table = keys.length
    ? html`<table><thead><tr><th>Name</th><th>Key</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="muted">No live keys. Run <code>npx nds auth login</code> in a terminal to sign it in.</p>`;
  const shown = minted
    ? html`<section class="card"><h2>Your new key</h2><p>Copy it now: it is shown only this once.</p><code class="secret" id="new-key">${minted.apiKey}</code></section>`
    : '';
  const newKey =
    user.kind === 'person'
      ? html`<h2>New key</h2><p class="muted">Prefer <code>npx nds auth login</code>. A named key is for places where a terminal cannot open a browser.</p>
<form class="stack" method="post" action="/account/keys"><label>Name<input type="text" name="name" maxlength="100" required placeholder="lab server"></label><button class="secondary" type="submit">Create key</button></form>`
      : '';
  return html`<h1>Your account</h1>${notices}${shown}
<section class="card"><dl class="facts">
<dt>Username</dt><dd><strong>${user.username}</strong></dd>
<dt>Email</dt><dd>${user.email}</dd>
<dt>Status</dt><dd>${user.status}</dd>
<dt>Role</dt><dd>${user.role}</dd>
<dt>Kind</dt><dd>${user.kind}</dd>
<dt>Storage</dt><dd>${storageText(await storageUseOf(c.var.deps, user))}</dd>
</dl></section>
${uploadAccessSection(user)}
<section class="card"><h2>API keys (${keys.length} of 25)</h2>${table}${newKey}</section>
<form method="post" action="/auth/logout"><button class="secondary" type="submit">Sign out</button></form>`;
}

/** What the account's datasets hold against its quotas, in words. */
function storageText(use: StorageUse): string {
  return `${heldText(use.used_bytes, use.quota_bytes)}; sandbox datasets: ${heldText(use.sandbox.used_bytes, use.sandbox.quota_bytes)}`;
}

/** Whether this account may upload real datasets, and the button that asks an administrator for it. */
function uploadAccessSection(user: User): SafeHtml | string {
  if (user.kind !== 'person') return '';
  let body: SafeHtml;
  if (user.status === 'approved') body = html`<p>You may create datasets and upload to them${user.sandbox_completed_at === null && user.role === 'member' ? html` once you finish the sandbox training (<code>nds sandbox status</code>)` : ''}.</p>`;
  else if (user.upload_access_requested_at !== null) body = html`<p>You asked for upload access on ${day(user.upload_access_requested_at)}. An administrator will decide; until then you can practise with a sandbox dataset.</p>`;
  else {
    body = html`<p>To publish real datasets, ask an administrator for upload access. Until then you can practise with a sandbox dataset.</p>
<form method="post" action="/account/upload-access"><button type="submit">Request upload access</button></form>`;
  }
  return html`<section class="card" id="upload-access"><h2>Upload access</h2>${body}</section>`;
}

/** The usable account of this browser, or the redirect (sign in, or verify first) or refusal page instead. */
async function usableAccount(c: Context<AppEnv>): Promise<User | Response> {
  const session = await pageSession(c);
  if (!session) return c.redirect(signInFirst('/account'), 303);
  if (session.user.status === 'pending') return c.redirect(verifyFirst(session.user, '/account'), 303);
  try {
    assertAccountUsable(session.user);
  } catch (err) {
    if (!(err instanceof NdsError)) throw err;
    const body = html`<h1>Your account</h1>${errorNotice(err.code)}<form method="post" action="/auth/logout"><button class="secondary" type="submit">Sign out</button></form>`;
    return renderPage(c, 'Your account', body, session.user.username, 403);
  }
  return session.user;
}

export const accountPages: Route[] = [
  route({
    method: 'get',
    path: '/account',
    summary: 'The account page: keys, status, sign-out',
    access: 'page',
    undocumented: true,
    handler: async (c) => {
    const user = await usableAccount(c);
    if (user instanceof Response) return user;
    const q = c.req.query();
    const notices = [errorNotice(q.error), okNotice(q.revoked ? 'The key is revoked.' : undefined), okNotice(q.requested ? 'Upload access is requested.' : undefined)];
    return renderPage(c, 'Your account', await accountBody(c, user, notices), user.username);
    },
  }),

  route({
    method: 'post',
    path: '/account/keys/:id/revoke',
    summary: "The account page's revoke button",
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c) => {
    requireOwnOrigin(c);
    const user = await usableAccount(c);
    if (user instanceof Response) return user;
    const id = Number(c.req.param('id'));
    try {
      if (!Number.isSafeInteger(id) || id <= 0) throw new NdsError('key_not_found');
      await revokeApiKey(c.var.deps.db, user.id, id);
    } catch (err) {
      if (!(err instanceof NdsError)) throw err;
      return c.redirect(withQuery('/account', { error: err.code }), 303);
    }
    return c.redirect('/account?revoked=1', 303);
    },
  }),

  route({
    method: 'post',
    path: '/account/keys',
    summary: "The account page's new-key form",
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c, { body }) => {
    requireOwnOrigin(c);
    const user = await usableAccount(c);
    if (user instanceof Response) return user;
    const name = body?.name?.trim().slice(0, 100);
    let minted: MintedKey;
    try {
      if (user.kind !== 'person') throw new NdsError('service_account');
      if (!name) throw new NdsError('validation_failed');
      minted = await mintApiKey(c.var.deps.db, user.id, name, 'named');
    } catch (err) {
      if (!(err instanceof NdsError)) throw err;
      return c.redirect(withQuery('/account', { error: err.code }), 303);
    }
    // The key is shown in this answer itself, never in a URL that a redirect would leave in the history.
    return renderPage(c, 'Your account', await accountBody(c, user, [], minted), user.username);
    },
  }),

  route({
    method: 'post',
    path: '/account/upload-access',
    summary: "The account page's request for upload access",
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c) => {
      requireOwnOrigin(c);
      const user = await usableAccount(c);
      if (user instanceof Response) return user;
      await requestUploadAccess(c.var.deps, user);
      return c.redirect('/account?requested=1#upload-access', 303);
    },
  }),
];
