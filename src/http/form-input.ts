/**
 * Browser sign-in routes take JSON from scripts and classic form posts from the pages (which work without
 * JavaScript). These helpers read either kind of body and build the redirects that answer a form.
 */
import type { Context } from 'hono';
import { z } from 'zod';

/** True when the body is a classic HTML form post. */
export function isFormPost(c: Context): boolean {
  const type = c.req.header('content-type') ?? '';
  return type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data');
}

/**
 * A body's string fields, from JSON or a form; empty strings count as absent. Routes that answer a form with
 * a redirect take this and validate the fields themselves, so that a wrong field sends the browser back to
 * its page with the error rather than to a JSON answer.
 */
export const FormFields = z.record(z.string(), z.unknown()).transform((raw, ctx) => {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v === 'string') {
      if (v.trim() !== '') out[k] = v;
    } else if (v !== null && v !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'expected a string' });
  }
  return out;
});

export type FormInput = z.output<typeof FormFields>;

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
