/**
 * What the account pages share: who is signed in on this browser, the own-Origin rule of their posts, and
 * notices that turn an error code from a redirect into the catalog's sentence.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { getCookie } from 'hono/cookie';
import { localNext, withQuery } from '../http/form-input.js';
import { findSession, SESSION_COOKIE } from '../accounts/sessions.js';
import type { User } from '../db/accounts-tables.js';
import type { AppEnv } from '../http/app-env.js';
import { isOwnOrigin } from '../http/auth.js';
import { errorSpec, NdsError, type ErrorCode } from '../core/errors.js';
import { html, page, type SafeHtml } from './html.js';

export interface PageSession {
  user: User;
  sessionHash: string;
}

/** The account signed in on this browser, whatever its status; `undefined` without a live session. */
export async function pageSession(c: Context<AppEnv>): Promise<PageSession | undefined> {
  const token = getCookie(c, SESSION_COOKIE);
  if (!token) return undefined;
  const { db, clock } = c.var.deps;
  return findSession(db, token, clock.now());
}

/** Posts of the pages change state: they must come from the service's own pages (else 403 foreign_origin). */
export function requireOwnOrigin(c: Context<AppEnv>): void {
  if (!isOwnOrigin(c)) throw new NdsError('foreign_origin');
}

/** Where a page that needs a session sends a browser without one, coming back to `here` afterwards. */
export function signInFirst(here: string): string {
  return withQuery('/login', { next: localNext(here) });
}

/** Where a pending account is sent: the step that mails a code to verify its address, then back to `here`. */
export function verifyFirst(user: User, here: string): string {
  return withQuery('/login', { step: 'verify', email: user.email, next: localNext(here) });
}

/** The catalog's sentence for an error code carried in a query string; `undefined` for anything else. */
export function errorSentence(code: string | undefined): string | undefined {
  if (!code || !/^[a-z_]{1,40}$/.test(code)) return undefined;
  const spec = errorSpec(code as ErrorCode) as { message?: unknown } | undefined;
  return typeof spec?.message === 'string' ? spec.message : undefined;
}

export function errorNotice(code: string | undefined): SafeHtml | string {
  const sentence = errorSentence(code);
  return sentence ? html`<p class="notice error" role="alert">${sentence}</p>` : '';
}

export function okNotice(text: string | undefined): SafeHtml | string {
  return text ? html`<p class="notice ok" role="status">${text}</p>` : '';
}

/** A full HTML answer that is never cached: these pages show accounts, codes and keys. */
export function renderPage(c: Context<AppEnv>, title: string, body: SafeHtml, username?: string, status: ContentfulStatusCode = 200): Response {
  c.header('Cache-Control', 'no-store');
  return c.html(page({ title, body, username }), status);
}
