/**
 * Who may call a route, declared once with it: the check that runs before the handler, the OpenAPI
 * `security` it documents, and the refusals it can answer all come from the one word here.
 */
import type { Context } from 'hono';
import type { AppEnv } from './app-env.js';
import { requireRoleOf, resolveCaller } from './auth.js';

/**
 * - `none`: anyone; the route reads no credential (webhooks check their own signature or token).
 * - `optional`: a bearer key, a browser session, or nobody; a bad bearer key is still refused.
 * - `key`: a bearer API key. `session`: a browser session (writes need the service's own Origin).
 * - `pending-session`: a session, also of an account still verifying its address.
 * - `any`: a key or a session. `admin`, `owner`: `any`, with that role.
 * - `page`: a browser page; it reads the session itself and sends a visitor without one to sign in.
 */
export type Access = 'none' | 'optional' | 'key' | 'session' | 'pending-session' | 'any' | 'admin' | 'owner' | 'page';

export async function checkAccess(c: Context<AppEnv>, access: Access): Promise<void> {
  switch (access) {
    case 'none':
    case 'page':
      return;
    case 'pending-session':
      return resolveCaller(c, 'session', { allowPending: true });
    case 'admin':
    case 'owner':
      await resolveCaller(c, 'any');
      return requireRoleOf(c, access);
    default:
      return resolveCaller(c, access);
  }
}

/** The OpenAPI security requirement of an access rule. */
export function securityOf(access: Access): Array<Record<string, string[]>> | undefined {
  switch (access) {
    case 'key':
    case 'any':
    case 'admin':
    case 'owner':
      return [{ bearer: [] }];
    case 'session':
    case 'pending-session':
      return [{ session: [] }];
    case 'optional':
      return [{ bearer: [] }, {}];
    default:
      return undefined;
  }
}

/** The statuses an access rule can answer by itself (documented beside the route's own). */
export function refusalsOf(access: Access): number[] {
  if (access === 'admin' || access === 'owner') return [401, 403];
  if (access === 'none' || access === 'page') return [];
  if (access === 'optional') return [401];
  return [401, 403];
}
