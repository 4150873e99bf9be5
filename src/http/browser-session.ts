/**
 * The `nds_session` cookie of a browser: set at sign-in (HttpOnly, SameSite=Lax, Secure when PUBLIC_URL is
 * https, 30 days), removed at sign-out, and the Origin rule of the posts that come before a session exists.
 */
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { User } from '../db/accounts-tables.js';
import type { AppEnv } from './app-env.js';
import { isOwnOrigin } from './auth.js';
import { clientIp } from './client-ip.js';
import { NdsError } from '../core/errors.js';
import { sha256Hex } from '../core/secrets.js';
import { createSession, deleteSession, SESSION_COOKIE, SESSION_DAYS, type CheckedSignIn } from '../accounts/sessions.js';

function secure(c: Context<AppEnv>): boolean {
  return c.var.deps.config.publicUrl.startsWith('https:');
}

/**
 * Signs `user` in on this browser: a new session (any earlier one of this browser is ended) and its cookie;
 * only if the account is still a live person account, as `checked` (createSession).
 */
export async function startBrowserSession(c: Context<AppEnv>, user: User, checked: CheckedSignIn = {}): Promise<void> {
  const { db, clock } = c.var.deps;
  const previous = getCookie(c, SESSION_COOKIE);
  if (previous) await deleteSession(db, sha256Hex(previous));
  const session = await createSession(db, user.id, clock.now(), { ip: clientIp(c), userAgent: c.req.header('user-agent') }, checked);
  setCookie(c, SESSION_COOKIE, session.token, {
    path: '/',
    httpOnly: true,
    sameSite: 'Lax',
    secure: secure(c),
    maxAge: SESSION_DAYS * 86_400,
    expires: session.expiresAt,
  });
}

/** Ends this browser's session, if it has one, and clears the cookie. */
export async function endBrowserSession(c: Context<AppEnv>): Promise<void> {
  const token = getCookie(c, SESSION_COOKIE);
  if (token) await deleteSession(c.var.deps.db, sha256Hex(token));
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure: secure(c), httpOnly: true, sameSite: 'Lax' });
}

/**
 * Posts made before a session exists (asking for a code, signing in) carry no cookie to protect, but a
 * foreign page must still not drive them: an `Origin` that is present and not the service's own is refused.
 */
export function refuseForeignOrigin(c: Context<AppEnv>): void {
  if (c.req.header('origin') !== undefined && !isOwnOrigin(c)) throw new NdsError('foreign_origin');
}

/** A browser with a session cookie must post from the service's own pages. */
export function requireOwnOriginWithCookie(c: Context<AppEnv>): void {
  if (getCookie(c, SESSION_COOKIE) !== undefined && !isOwnOrigin(c)) throw new NdsError('foreign_origin');
  refuseForeignOrigin(c);
}
