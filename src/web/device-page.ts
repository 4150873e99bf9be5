/**
 * `/device`: the page where a person approves or denies a terminal's sign-in (RFC 8628 section 3.3). It shows which
 * machine asked and which account would be signed in, and says in words why a code cannot be used.
 * Its posts call the same device-flow services as the JSON routes, with the same guess limits.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { guardCodeGuess } from '../accounts/device-limits.js';
import { confirmDeviceCode, denyDeviceCode, lookupDeviceCode, normalizeUserCode, formatUserCode, type DeviceLookup } from '../accounts/device-flow.js';
import { FormFields, withQuery } from '../http/form-input.js';
import { route, type Route } from '../http/route.js';
import type { AppEnv } from '../http/app-env.js';
import { clientLimitKey } from '../http/client-ip.js';
import { NdsError } from '../core/errors.js';
import { html } from './html.js';
import { errorNotice, okNotice, pageSession, renderPage, requireOwnOrigin, signInFirst, verifyFirst, type PageSession } from './page-kit.js';

/** A typed code as shown (`BCDF-GHJK`), or the input as typed when it is not 8 characters. */
function shownCode(typed: string): string {
  const normalized = normalizeUserCode(typed);
  return normalized.length === 8 ? formatUserCode(normalized) : typed.slice(0, 32);
}

function codeForm(code: string | undefined) {
  return html`<section class="card">
<p>Type the code your terminal shows (for example after <code>npx nds auth login</code>).</p>
<form class="stack" method="get" action="/device">
<label>Code<input class="code" type="text" name="code" value="${code ?? ''}" placeholder="XXXX-XXXX" maxlength="32" autocomplete="off" required autofocus></label>
<button type="submit">Continue</button>
</form>
</section>`;
}

function decision(found: DeviceLookup) {
  const facts = html`<dl class="facts">
<dt>Code</dt><dd class="mono">${found.user_code}</dd>
<dt>Machine</dt><dd>${found.machine_name ?? 'unnamed machine'}</dd>
<dt>Requested</dt><dd>${found.requested_at.replace('T', ' ').slice(0, 19)} UTC (expires in ${Math.ceil(found.expires_in / 60)} min)</dd>
<dt>Account</dt><dd><strong>${found.account.username}</strong> (${found.account.email_masked})</dd>
</dl>`;
  const hidden = html`<input type="hidden" name="code" value="${found.user_code}">`;
  const deny = html`<form class="inline" method="post" action="/device/deny">${hidden}<button class="danger" type="submit">Deny</button></form>`;
  if (found.refusal) {
    return html`<section class="card">${facts}<p class="notice error" role="alert">${found.refusal.message}</p><div class="actions">${deny}</div></section>`;
  }
  const already = found.state === 'authorized' ? html`<p class="muted">You already approved this code; the terminal collects its key at its next poll.</p>` : '';
  return html`<section class="card">
<p>A terminal asks to sign in to nds as you. Approve only if you started this yourself, on this machine.</p>
${facts}${already}
<div class="actions"><form class="inline" method="post" action="/device/approve">${hidden}<button type="submit">Approve</button></form>${deny}</div>
</section>`;
}

async function signedIn(c: Context<AppEnv>, here: string): Promise<PageSession | Response> {
  const session = await pageSession(c);
  if (!session) return c.redirect(signInFirst(here), 303);
  if (session.user.status === 'pending') return c.redirect(verifyFirst(session.user, here), 303);
  return session;
}

export const devicePages: Route[] = [
  route({
    method: 'get',
    path: '/device',
    summary: 'The page where a person types or confirms the code a terminal shows',
    access: 'page',
    undocumented: true,
    handler: async (c) => {
    const q = c.req.query();
    const typed = q.code?.trim() || undefined;
    const here = typed ? withQuery('/device', { code: typed }) : '/device';
    const session = await signedIn(c, here);
    if (session instanceof Response) return session;
    const username = session.user.username;
    const title = 'Sign in a terminal';
    if (q.result === 'approved' || q.result === 'denied') {
      const text = q.result === 'approved' ? 'Approved. Your terminal is signed in within a few seconds; you can close this page.' : 'Denied. The terminal was not signed in.';
      return renderPage(c, title, html`<h1>${title}</h1>${okNotice(text)}`, username);
    }
    if (!typed) return renderPage(c, title, html`<h1>${title}</h1>${errorNotice(q.error)}${codeForm(undefined)}`, username);
    const { db, clock } = c.var.deps;
    try {
      const found = await guardCodeGuess(c.var.deps.deviceLimits, { sessionHash: session.sessionHash, ip: clientLimitKey(c) }, () =>
        lookupDeviceCode(db, typed, session.user, clock.now()),
      );
      return renderPage(c, title, html`<h1>${title}</h1>${errorNotice(q.error)}${decision(found)}`, username);
    } catch (err) {
      if (!(err instanceof NdsError)) throw err;
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return renderPage(c, title, html`<h1>${title}</h1>${errorNotice(err.code)}${codeForm(shownCode(typed))}`, username, err.status as ContentfulStatusCode);
    }
    },
  }),
  decisionPage('/device/approve', confirmDeviceCode, 'approved'),
  decisionPage('/device/deny', denyDeviceCode, 'denied'),
];

/** The page's approve and deny buttons: back to the page with the result, or with the error. */
function decisionPage(path: string, act: typeof confirmDeviceCode, result: 'approved' | 'denied'): Route {
  return route({
    method: 'post',
    path,
    summary: `The device page's ${result === 'approved' ? 'approve' : 'deny'} button`,
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c, { body }) => {
      requireOwnOrigin(c);
      const typed = body?.code ?? '';
      const session = await signedIn(c, withQuery('/device', { code: typed }));
      if (session instanceof Response) return session;
      const { db, clock } = c.var.deps;
      try {
        await guardCodeGuess(c.var.deps.deviceLimits, { sessionHash: session.sessionHash, ip: clientLimitKey(c) }, () => act(db, typed, session.user, clock.now()));
      } catch (err) {
        if (!(err instanceof NdsError)) throw err;
        for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
        // The code itself can no longer be shown for these, so the page goes back to the empty form.
        const codeGone = ['device_code_unknown', 'device_code_expired', 'device_code_used', 'device_code_denied', 'rate_limited'].includes(err.code);
        return c.redirect(withQuery('/device', { code: codeGone ? undefined : shownCode(typed), error: err.code }), 303);
      }
      return c.redirect(withQuery('/device', { result }), 303);
    },
  });
}
