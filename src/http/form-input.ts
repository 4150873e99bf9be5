/**
 * Browser sign-in routes take JSON from scripts and classic form posts from the pages (which work without
 * JavaScript). These helpers read either kind of body and build the redirects that answer a form.
 */
import type { Context } from 'hono';
import type { AppEnv } from './app-env.js';
import { NdsError } from '../core/errors.js';

/** True when the body is a classic HTML form post. */
export function isFormPost(c: Context<AppEnv>): boolean {
  const type = c.req.header('content-type') ?? '';
  return type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data');
}

/** The body's string fields, from JSON or a form; empty strings count as absent. */
export async function readInput(c: Context<AppEnv>): Promise<Record<string, string | undefined>> {
  let raw: unknown;
  try {
    if (isFormPost(c)) raw = await c.req.parseBody();
    else raw = await c.req.json();
  } catch {
    throw new NdsError('validation_failed', { details: ['body: expected a JSON object or a form body'] });
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new NdsError('validation_failed', { details: ['body: expected an object'] });
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v === 'string' && v.trim() !== '') out[k] = v;
    else if (v !== null && v !== undefined && typeof v !== 'string') throw new NdsError('validation_failed', { details: [`${k}: expected a string`] });
  }
  return out;
}

/**
 * `next` if it is a path on this site (`/device?code=...`), else `fallback`. Never an absolute URL or
 * `//host`, so a sign-in link cannot send a person elsewhere.
 */
export function localNext(next: string | undefined, fallback = '/account'): string {
  if (!next || next.length > 500) return fallback;
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\u0000-\u001f\\]/.test(next)) return fallback;
  return next;
}

/** `path?k=v&...`, leaving out empty values. */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
