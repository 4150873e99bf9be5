/**
 * The legacy account routes of old clients (docs/api.md): password sign-up,
 * resending the verification, retrieving a key by email and password, and regenerating one by a mailed link
 * (whose GET only shows a button: the POST mints).
 * Each deprecated answer says so (RFC 9745 `Deprecation`) and links its successor (RFC 8288 `Link`).
 * `/auth/resend-verification` is not deprecated.
 */
import { z } from '@hono/zod-openapi';
import { clientLimitKey } from '../http/client-ip.js';
import { isNdsError, NdsError } from '../core/errors.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { confirmKeyRegenerationPage, keyRegenerationErrorPage, newKeyPage } from '../web/key-regeneration-page.js';
import { presentApiKey } from '../accounts/api-keys.js';
import { refuseForeignOrigin } from '../http/browser-session.js';
import { FormFields } from '../http/form-input.js';
import { confirmKeyRegeneration, isKeyRegenerationLinkLive, registerWithPassword, requestKeyRegeneration, resendVerification, retrieveKeyByPassword } from '../accounts/legacy-accounts.js';
import { KeySchema, UserSchema } from './account-schemas.js';
import { EmailBody, RetrieveKeyBody, SignupBody } from './sign-in-schemas.js';
import { limitFailures } from '../accounts/sign-in-limits.js';
import { passwordFailureKey } from '../accounts/password-login.js';
import { spendMail } from '../http/sign-in-guard.js';
import { presentUser } from '../accounts/users.js';

const SENT = 'If that address belongs to an account that can use it, a mail is on its way.';

const KeyGrant = z.object({ api_key: z.string(), key: KeySchema, user: UserSchema });
const Sent = z.object({ ok: z.literal(true), message: z.string() });
const TokenQuery = z.object({ token: z.string().max(200).default('') });
const TokenBody = z.object({ token: z.string().max(200) });

/** A route that mails a link or a code to an address: the same answer whether or not the address can use it. */
function mailingRoute(path: string, summary: string, send: typeof resendVerification, successor?: string): Route {
  return route({
    method: 'post',
    path,
    ...(successor && { deprecated: { successor } }),
    summary,
    access: 'none',
    body: { schema: EmailBody },
    responses: { 200: jsonResponse(Sent, 'Accepted') },
    handler: async (c, { body }) => {
      const { db, mailer, config, clock } = c.var.deps;
      await spendMail(c, body.email);
      await send({ db, mailer, publicUrl: config.publicUrl }, body.email, clock.now());
      return c.json({ ok: true as const, message: SENT }, 200);
    },
  });
}

export const deprecatedRoutes: Route[] = [
  route({
    method: 'post',
    path: '/auth/signup',
    deprecated: { successor: '/auth/code/request' },
    summary: 'Register a person account with a password (deprecated: use /auth/code/request or `nds auth signup`)',
    access: 'none',
    body: { schema: SignupBody },
    responses: { 201: jsonResponse(z.object({ user: UserSchema, message: z.string() }), 'A pending account; a verification code was mailed (the same answer for an address an account uses: nothing is made and its owner is mailed a notice)'), 409: errorResponses[409] },
    handler: async (c, { body }) => {
      const { db, mailer, config, clock } = c.var.deps;
      await spendMail(c, body.email);
      const user = await registerWithPassword({ db, mailer, publicUrl: config.publicUrl }, body, clock.now());
      return c.json({ user, message: `We mailed a code to ${user.email}: type it on ${config.publicUrl}/login to verify the address.` }, 201);
    },
  }),

  mailingRoute('/auth/resend-verification', 'Mail a new verification code to a pending account (the same answer for any address)', resendVerification),

  route({
    method: 'post',
    path: '/auth/retrieve-key',
    deprecated: { successor: '/auth/device/start' },
    summary: 'Get an API key by email and password (deprecated: keys are never stored in clear, so this mints a new one and revokes the previous one obtained this way)',
    access: 'none',
    body: { schema: RetrieveKeyBody },
    responses: { 200: jsonResponse(KeyGrant, 'A new key, shown once'), 409: errorResponses[409] },
    handler: async (c, { body }) => {
      const limits = c.var.deps.signInLimits;
      const { user, minted } = await limitFailures(
        [[limits.failuresPerIp, clientLimitKey(c)], [limits.failuresPerLogin, await passwordFailureKey(c.var.deps.db, body.email)]],
        (err) => isNdsError(err, 'invalid_credentials'),
        () => retrieveKeyByPassword(c.var.deps.db, body.email, body.password),
      );
      return c.json({ api_key: minted.apiKey, key: presentApiKey(minted.row, minted.row.id), user: presentUser(user) }, 200);
    },
  }),

  mailingRoute('/auth/request-key-regeneration', 'Mail a one-time link that mints a new key (deprecated: use the device flow)', requestKeyRegeneration, '/auth/device/start'),

  // A mailed link is opened by mail scanners as well as people (`Accept: */*` or anything else): its GET only
  // shows a button, and nothing but the POST of that button (or of a JSON client) uses the link.
  route({
    method: 'get',
    path: '/auth/confirm-key-regeneration',
    deprecated: { successor: '/auth/device/start' },
    summary: 'The page of a mailed key-regeneration link (deprecated): a button that posts the token. Whatever the request accepts, a GET mints nothing and leaves the link usable',
    access: 'none',
    query: TokenQuery,
    responses: { 200: { description: 'The confirmation page (HTML)', content: { 'text/html': { schema: z.string() } } } },
    handler: async (c, { query }) => {
      const { db, clock } = c.var.deps;
      return c.html(confirmKeyRegenerationPage(query.token, await isKeyRegenerationLinkLive(db, query.token, clock.now())), 200);
    },
  }),

  route({
    method: 'post',
    path: '/auth/confirm-key-regeneration',
    deprecated: { successor: '/auth/device/start' },
    summary: 'Use a mailed key-regeneration link (deprecated): mints the new key, once, and revokes the earlier legacy key',
    access: 'none',
    body: { schema: TokenBody, media: ['json', 'form'] },
    responses: { 200: jsonResponse(KeyGrant, 'A new key, shown once'), 410: errorResponses[404] },
    handler: async (c, { body }) => {
      refuseForeignOrigin(c);
      const { db, clock } = c.var.deps;
      const { user, minted } = await confirmKeyRegeneration(db, body.token, clock.now());
      return c.json({ api_key: minted.apiKey, key: presentApiKey(minted.row, minted.row.id), user: presentUser(user) }, 200);
    },
  }),

  route({
    method: 'post',
    path: '/auth/confirm-key-regeneration',
    page: true,
    deprecated: { successor: '/auth/device/start' },
    summary: "The page's button: mints the new key and shows it once",
    access: 'none',
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c, { body }) => {
      refuseForeignOrigin(c);
      const { db, clock } = c.var.deps;
      try {
        const { user, minted } = await confirmKeyRegeneration(db, body?.token ?? '', clock.now());
        return c.html(newKeyPage(minted.apiKey, user.username), 200);
      } catch (err) {
        if (!(err instanceof NdsError)) throw err;
        return c.html(keyRegenerationErrorPage(err.code), err.status as 400);
      }
    },
  }),
];
