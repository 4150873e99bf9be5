/**
 * `/setup`: the first owner, made in the browser from the one-time link `nds serve` prints while the service
 * has no owner (accounts/owner-setup.ts). GET shows the form; POST creates the owner, verified, and signs
 * this browser in. A used link answers 410, a wrong one 403, with the page saying what to do instead.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { NdsError, errorSpec } from '../core/errors.js';
import type { AppEnv } from '../http/app-env.js';
import { refuseForeignOrigin, startBrowserSession } from '../http/browser-session.js';
import { FormFields } from '../http/form-input.js';
import { route, type Route } from '../http/route.js';
import { html } from '../web/html.js';
import { renderPage } from '../web/page-kit.js';
import { setupDoneBody, setupFormBody, setupRefusedBody } from '../web/setup-page.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

function refused(c: Context<AppEnv>, err: NdsError): Response {
  return renderPage(c, 'Set up nds', setupRefusedBody(err.message), undefined, errorSpec(err.code).status as ContentfulStatusCode);
}

export const setupRoutes: Route[] = [
  route({
    method: 'get',
    path: '/setup',
    summary: 'The first-run page: the form that makes the owner from the one-time setup link',
    access: 'page',
    undocumented: true,
    handler: async (c) => {
      const token = c.req.query('token') ?? '';
      try {
        await c.var.deps.ownerSetup.check(c.var.deps.db, token);
      } catch (err) {
        if (err instanceof NdsError) return refused(c, err);
        throw err;
      }
      return renderPage(c, 'Set up nds', setupFormBody({ token }));
    },
  }),

  route({
    method: 'post',
    path: '/setup',
    summary: 'The setup form: creates the owner, verified, and signs this browser in',
    access: 'page',
    undocumented: true,
    body: { schema: FormFields, media: ['form', 'json'], optional: true },
    handler: async (c, { body }) => {
      refuseForeignOrigin(c);
      const { deps } = c.var;
      const token = body?.token ?? '';
      const username = body?.username?.trim() ?? '';
      const email = body?.email?.trim() ?? '';
      try {
        if (!EMAIL.test(email)) throw new NdsError('validation_failed', { message: 'Give a valid email address.' });
        const user = await deps.ownerSetup.redeem(deps.db, token, { username, email });
        await startBrowserSession(c, user);
        deps.log.info({ username: user.username }, 'the owner account was created through the setup link');
        return renderPage(c, 'Welcome', setupDoneBody(user.username, deps.config.publicUrl), user.username);
      } catch (err) {
        if (!(err instanceof NdsError)) throw err;
        if (err.code.startsWith('setup_link_')) return refused(c, err);
        const sentence = err.details.length ? `${err.message} ${err.details.join('; ')}` : err.message;
        const notice = html`<p class="notice error" role="alert">${sentence}</p>`;
        return renderPage(c, 'Set up nds', setupFormBody({ token, username, email }, notice), undefined, errorSpec(err.code).status as ContentfulStatusCode);
      }
    },
  }),
];
