/**
 * The legacy account routes of old clients (seed §4 "Other authentication routes"): password sign-up,
 * resending the verification, retrieving a key by email and password, and regenerating one by a mailed link.
 * Each deprecated answer says so (RFC 9745 `Deprecation`) and links its successor (RFC 8288 `Link`).
 * `/auth/resend-verification` is not deprecated (seed §9).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { clientIp } from '../http/client-ip.js';
import { isNdsError, NdsError } from '../core/errors.js';
import { errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { confirmKeyRegenerationPage, keyRegenerationErrorPage, newKeyPage } from '../web/key-regeneration-page.js';
import { presentApiKey } from '../accounts/api-keys.js';
import { refuseForeignOrigin } from '../http/browser-session.js';
import { readInput } from '../http/form-input.js';
import { confirmKeyRegeneration, isKeyRegenerationLinkLive, registerWithPassword, requestKeyRegeneration, resendVerification, retrieveKeyByPassword } from '../accounts/legacy-accounts.js';
import { KeySchema, UserSchema } from './account-schemas.js';
import { EmailBody, RetrieveKeyBody, SignupBody } from './sign-in-schemas.js';
import { spend } from '../accounts/sign-in-limits.js';
import { presentUser } from '../accounts/users.js';

/** When these routes were deprecated (2026-11-23T00:00:00Z), as RFC 9745's `@<unix seconds>`. */
export const DEPRECATED_SINCE = '@1795392000';

const successors: Record<string, string> = {
  '/auth/signup': '/auth/code/request',
  '/auth/retrieve-key': '/auth/device/start',
  '/auth/request-key-regeneration': '/auth/device/start',
  '/auth/confirm-key-regeneration': '/auth/device/start',
};

const SENT = 'If that address belongs to an account that can use it, a mail is on its way.';

const KeyGrant = z.object({ api_key: z.string(), key: KeySchema, user: UserSchema });
const Sent = z.object({ ok: z.literal(true), message: z.string() });

const routes = {
  signup: createRoute({
    method: 'post',
    path: '/auth/signup',
    deprecated: true,
    summary: 'Register a person account with a password (deprecated: use /auth/code/request or `nds auth signup`)',
    request: jsonBody(SignupBody),
    responses: { 201: jsonResponse(z.object({ user: UserSchema, message: z.string() }), 'A pending account; a verification code was mailed'), 400: errorResponses[400], 409: errorResponses[409] },
  }),
  resend: createRoute({
    method: 'post',
    path: '/auth/resend-verification',
    summary: 'Mail a new verification code to a pending account (the same answer for any address)',
    request: jsonBody(EmailBody),
    responses: { 200: jsonResponse(Sent, 'Accepted'), 400: errorResponses[400] },
  }),
  retrieve: createRoute({
    method: 'post',
    path: '/auth/retrieve-key',
    deprecated: true,
    summary: 'Get an API key by email and password (deprecated: keys are never stored in clear, so this mints a new one and revokes the previous one obtained this way)',
    request: jsonBody(RetrieveKeyBody),
    responses: { 200: jsonResponse(KeyGrant, 'A new key, shown once'), 401: errorResponses[401], 403: errorResponses[403], 409: errorResponses[409] },
  }),
  requestRegeneration: createRoute({
    method: 'post',
    path: '/auth/request-key-regeneration',
    deprecated: true,
    summary: 'Mail a one-time link that mints a new key (deprecated: use the device flow)',
    request: jsonBody(EmailBody),
    responses: { 200: jsonResponse(Sent, 'Accepted'), 400: errorResponses[400] },
  }),
};

function deprecation(c: Context<AppEnv>, path: string): void {
  c.header('Deprecation', DEPRECATED_SINCE);
  c.header('Link', `<${c.var.deps.config.publicUrl}${successors[path]}>; rel="successor-version"`);
}

/** True when the client asked for a page (a browser opening the mailed link), not for JSON. */
function wantsHtml(c: Context<AppEnv>): boolean {
  return (c.req.header('accept') ?? '').includes('text/html');
}

export function deprecatedRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  // After the handler, so that refusals (thrown, answered by the error handler) carry the headers too.
  for (const path of Object.keys(successors)) {
    app.use(path, async function deprecatedRoute(c, next) {
      await next();
      deprecation(c, path);
    });
  }

  app.openapi(routes.signup, async (c) => {
    const body = c.req.valid('json');
    const { db, mailer, config, clock } = c.var.deps;
    const limits = c.var.deps.signInLimits;
    spend([limits.mailPerAddress, body.email.toLowerCase()], [limits.mailPerIp, clientIp(c)]);
    const user = await registerWithPassword({ db, mailer, publicUrl: config.publicUrl }, body, clock.now());
    return c.json({ user: presentUser(user), message: `We mailed a code to ${user.email}: type it on ${config.publicUrl}/login to verify the address.` }, 201);
  });

  app.openapi(routes.resend, async (c) => {
    const { email } = c.req.valid('json');
    const { db, mailer, config, clock } = c.var.deps;
    const limits = c.var.deps.signInLimits;
    spend([limits.mailPerAddress, email.toLowerCase()], [limits.mailPerIp, clientIp(c)]);
    await resendVerification({ db, mailer, publicUrl: config.publicUrl }, email, clock.now());
    return c.json({ ok: true as const, message: SENT }, 200);
  });

  app.openapi(routes.retrieve, async (c) => {
    const { email, password } = c.req.valid('json');
    const limits = c.var.deps.signInLimits;
    const ip = clientIp(c);
    const login = email.toLowerCase();
    limits.failuresPerIp.check(ip);
    limits.failuresPerLogin.check(login);
    try {
      const { user, minted } = await retrieveKeyByPassword(c.var.deps.db, email, password);
      return c.json({ api_key: minted.apiKey, key: presentApiKey(minted.row, minted.row.id), user: presentUser(user) }, 200);
    } catch (err) {
      if (isNdsError(err, 'invalid_credentials')) {
        limits.failuresPerIp.hit(ip);
        limits.failuresPerLogin.hit(login);
      }
      throw err;
    }
  });

  app.openapi(routes.requestRegeneration, async (c) => {
    const { email } = c.req.valid('json');
    const { db, mailer, config, clock } = c.var.deps;
    const limits = c.var.deps.signInLimits;
    spend([limits.mailPerAddress, email.toLowerCase()], [limits.mailPerIp, clientIp(c)]);
    await requestKeyRegeneration({ db, mailer, publicUrl: config.publicUrl }, email, clock.now());
    return c.json({ ok: true as const, message: SENT }, 200);
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/auth/confirm-key-regeneration',
    deprecated: true,
    summary: 'Use a mailed key-regeneration link (deprecated). A JSON client gets the new key; a browser gets a page whose button posts the token, so that mail scanners cannot use up the link',
    request: { query: z.object({ token: z.string() }) },
    responses: { 200: jsonResponse(KeyGrant, 'A new key, shown once'), 410: errorResponses[404] },
  });
  app.get('/auth/confirm-key-regeneration', async (c) => {
    const token = c.req.query('token') ?? '';
    const { db, clock } = c.var.deps;
    if (wantsHtml(c)) return c.html(confirmKeyRegenerationPage(token, await isKeyRegenerationLinkLive(db, token, clock.now())), 200);
    const { user, minted } = await confirmKeyRegeneration(db, token, clock.now());
    return c.json({ api_key: minted.apiKey, key: presentApiKey(minted.row, minted.row.id), user: presentUser(user) }, 200);
  });

  app.post('/auth/confirm-key-regeneration', async (c) => {
    refuseForeignOrigin(c);
    const token = (await readInput(c)).token ?? '';
    const { db, clock } = c.var.deps;
    try {
      const { user, minted } = await confirmKeyRegeneration(db, token, clock.now());
      return c.html(newKeyPage(minted.apiKey, user.username), 200);
    } catch (err) {
      if (!(err instanceof NdsError)) throw err;
      return c.html(keyRegenerationErrorPage(err.code), err.status as 400);
    }
  });

  return app;
}
