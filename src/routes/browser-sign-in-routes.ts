/**
 * Browser sign-in (docs/api.md): a code by mail, a password, sign-out. Each route takes JSON (answering JSON)
 * or a classic form post from the pages (answering a 303 redirect, back to the page on an error), so the
 * pages work without JavaScript.
 */
import { z } from '@hono/zod-openapi';
import type { ZodType } from 'zod';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { clientLimitKey } from '../http/client-ip.js';
import { NdsError, isNdsError } from '../core/errors.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route, type RouteSpec } from '../http/route.js';
import { endBrowserSession, refuseForeignOrigin, requireOwnOriginWithCookie, startBrowserSession } from '../http/browser-session.js';
import { completeSignInCode, requestSignInCode } from '../accounts/email-sign-in.js';
import { FormFields, isFormPost, localNext, withQuery, type FormInput } from '../http/form-input.js';
import { passwordFailureKey, passwordLogin } from '../accounts/password-login.js';
import { UserSchema } from './account-schemas.js';
import { CodeRequestBody, CodeVerifyBody, PasswordLoginBody } from './sign-in-schemas.js';
import { validate } from '../http/request-input.js';
import { limitFailures } from '../accounts/sign-in-limits.js';
import { limitCodeFailures, spendMail } from '../http/sign-in-guard.js';
import { presentUser } from '../accounts/users.js';

const CODE_SENT = 'If that address can sign in, a code is on its way. It works for 10 minutes.';

/**
 * A sign-in route that takes JSON or a page's form post. Its fields are validated here, after the Origin
 * check, so that a wrong field also goes back to the page. A form post is answered with a redirect: to
 * `success` when it worked, or back to the page `failure` names with the error code (the page shows the
 * catalog's sentence for it). A refused Origin is never turned into a redirect.
 */
function signInRoute<S extends ZodType>(spec: {
  path: string;
  summary: string;
  schema: S;
  responses: RouteSpec['responses'];
  act: (c: Context<AppEnv>, body: z.output<S>, input: FormInput) => Promise<{ json: Record<string, unknown>; success: string }>;
  failure: (input: FormInput, code: string) => string;
}): Route {
  return route({
    method: 'post',
    path: spec.path,
    summary: spec.summary,
    access: 'none',
    body: { schema: FormFields, media: ['json', 'form'], documents: spec.schema },
    responses: spec.responses,
    handler: async (c, { body: input }) => {
      const form = isFormPost(c);
      try {
        refuseForeignOrigin(c);
        const done = await spec.act(c, validate(spec.schema, input, 'body') as z.output<S>, input);
        return form ? c.redirect(done.success, 303) : c.json(done.json, 200);
      } catch (err) {
        if (!form || !(err instanceof NdsError) || err.code === 'foreign_origin') throw err;
        for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
        return c.redirect(spec.failure(input, err.code), 303);
      }
    },
  });
}

const signedIn = { 200: jsonResponse(z.object({ ok: z.literal(true), user: UserSchema }), 'Signed in') };

export const browserSignInRoutes: Route[] = [
  signInRoute({
    path: '/auth/code/request',
    summary: 'Mail a 6-digit sign-in code (10 minutes, 5 tries); with `username`, an unknown address gets a new pending account',
    schema: CodeRequestBody,
    responses: { 200: jsonResponse(z.object({ ok: z.literal(true), message: z.string() }), 'The same answer whether or not the address has an account'), 409: errorResponses[409], 429: errorResponses[400] },
    act: async (c, body, input) => {
      await spendMail(c, body.email);
      const { db, mailer, config, clock } = c.var.deps;
      await requestSignInCode({ db, mailer, publicUrl: config.publicUrl }, body, clock.now());
      return { json: { ok: true, message: CODE_SENT }, success: withQuery('/login', { step: 'code', email: body.email, next: input.next }) };
    },
    failure: (input, error) => withQuery(input.from === 'signup' ? '/signup' : '/login', { error, email: input.email, username: input.username, next: input.next }),
  }),

  signInRoute({
    path: '/auth/code/verify',
    summary: 'Check a mailed code: verifies the address (pending → verified) and sets the nds_session cookie',
    schema: CodeVerifyBody,
    responses: { ...signedIn, 409: errorResponses[409] },
    act: async (c, body, input) => {
      const { db, clock } = c.var.deps;
      const user = await limitCodeFailures(c, body.email, () => completeSignInCode(db, body, clock.now()));
      await startBrowserSession(c, user);
      return { json: { ok: true, user: presentUser(user) }, success: localNext(input.next) };
    },
    // A name taken since the code was asked for: back to the sign-up, to choose another.
    failure: (input, error) =>
      error === 'username_taken' ? withQuery('/signup', { error, email: input.email, next: input.next }) : withQuery('/login', { step: 'code', error, email: input.email, next: input.next }),
  }),

  signInRoute({
    path: '/auth/password/login',
    summary: 'Sign in with a username or email and a password (accounts registered by the legacy /auth/signup)',
    schema: PasswordLoginBody,
    responses: signedIn,
    act: async (c, body, input) => {
      const limits = c.var.deps.signInLimits;
      const user = await limitFailures(
        [[limits.failuresPerIp, clientLimitKey(c)], [limits.failuresPerLogin, await passwordFailureKey(c.var.deps.db, body.login)]],
        (err) => isNdsError(err, 'invalid_credentials'),
        () => passwordLogin(c.var.deps.db, body.login, body.password),
      );
      await startBrowserSession(c, user, { passwordHash: user.password_hash });
      return { json: { ok: true, user: presentUser(user) }, success: localNext(input.next) };
    },
    failure: (input, error) => withQuery('/login', { error, login: input.login, next: input.next }),
  }),

  route({
    method: 'post',
    path: '/auth/logout',
    summary: "End this browser's session and clear its cookie",
    // Not through a session check: a session whose account was since revoked must still be able to sign out.
    access: 'none',
    body: { schema: FormFields, media: ['json', 'form'], optional: true },
    responses: { 200: jsonResponse(z.object({ ok: z.literal(true) }), 'Signed out') },
    handler: async (c) => {
      requireOwnOriginWithCookie(c);
      await endBrowserSession(c);
      return isFormPost(c) ? c.redirect('/login?signed_out=1', 303) : c.json({ ok: true }, 200);
    },
  }),
];
