/**
 * Who calls: bearer API keys for the API and the CLI, the `nds_session` cookie for browser pages.
 * `access.ts` runs these for every route by its declared access rule.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { assertAccountUsable, hasRole } from '../accounts/account-gates.js';
import { findApiKey, touchApiKey } from '../accounts/api-keys.js';
import { findSession, SESSION_COOKIE } from '../accounts/sessions.js';
import type { AppEnv, Caller } from './app-env.js';
import { NdsError } from '../core/errors.js';
import type { Actor } from '../accounts/admin-users.js';
import { clientIp } from './client-ip.js';

type Mode = 'key' | 'session' | 'any' | 'optional';

function bearerToken(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('authorization');
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new NdsError('unauthorized', { message: 'The Authorization header must be "Bearer <API key>".' });
  return m[1];
}

async function fromBearer(c: Context<AppEnv>, token: string): Promise<Caller> {
  const { db, clock } = c.var.deps;
  const found = await findApiKey(db, token, c.var.deps.keyCache);
  if (!found) throw new NdsError('unauthorized', { message: 'The API key is not valid or was revoked.' });
  // docs/api.md: a bearer key of a revoked account is refused with 401 everywhere.
  if (found.user.status === 'revoked') {
    throw new NdsError('unauthorized', { message: 'This account\'s access has been revoked.' });
  }
  assertAccountUsable(found.user);
  void touchApiKey(db, found.key, clock.now())?.catch((err) => c.var.deps.log.warn({ err }, 'last_used_at update failed'));
  return { user: found.user, key: found.key };
}

async function fromSession(c: Context<AppEnv>, allowPending: boolean): Promise<Caller | undefined> {
  const token = getCookie(c, SESSION_COOKIE);
  if (!token) return undefined;
  const { db, clock } = c.var.deps;
  const found = await findSession(db, token, clock.now());
  if (!found) return undefined;
  if (!(allowPending && found.user.status === 'pending')) assertAccountUsable(found.user);
  return { user: found.user, sessionHash: found.sessionHash };
}

/** True when the request's Origin is the service's own (PUBLIC_URL's origin). */
export function isOwnOrigin(c: Context<AppEnv>): boolean {
  const origin = c.req.header('origin');
  if (!origin) return false;
  return origin === new URL(c.var.deps.config.publicUrl).origin;
}

export interface AuthOptions {
  /** Lets a session of a pending account through (to finish verification); the default refuses it. */
  allowPending?: boolean;
}

/**
 * Sets `caller` from the request's credentials, or refuses:
 * - `key`: a bearer API key is required.
 * - `session`: a browser session is required; state-changing methods also need the service's own Origin.
 * - `any`: either.
 * - `optional`: either or none; a bad bearer key still answers 401 rather than silently acting anonymous.
 */
export async function resolveCaller(c: Context<AppEnv>, mode: Mode, options: AuthOptions = {}): Promise<void> {
  const token = mode === 'session' ? undefined : bearerToken(c);
  let caller: Caller | undefined;
  if (token !== undefined) {
    caller = await fromBearer(c, token);
  } else if (mode !== 'key') {
    caller = await fromSession(c, options.allowPending ?? false);
    if (caller && !['GET', 'HEAD', 'OPTIONS'].includes(c.req.method) && !isOwnOrigin(c)) {
      throw new NdsError('foreign_origin');
    }
  }
  if (!caller && mode !== 'optional') {
    throw new NdsError(mode === 'session' ? 'session_required' : 'unauthorized');
  }
  if (caller) c.set('caller', caller);
}

/** Needs an authenticated caller with at least `role` (after `resolveCaller`). */
export function requireRoleOf(c: Context<AppEnv>, role: 'admin' | 'owner'): void {
  const caller = c.var.caller;
  if (!caller) throw new NdsError('unauthorized');
  if (!hasRole(caller.user, role)) throw new NdsError(role === 'owner' ? 'owner_required' : 'admin_required');
}

/** The authenticated caller; throws when a route forgot its access rule. */
export function callerOf(c: Context<AppEnv>): Caller {
  const caller = c.var.caller;
  if (!caller) throw new NdsError('unauthorized');
  return caller;
}

/** The caller as the author of an audited action: the account and the address it acted from. */
export function actorOf(c: Context<AppEnv>): Actor {
  return { user: callerOf(c).user, ip: clientIp(c) };
}
