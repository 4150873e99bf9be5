/** Account routes: API keys, key login, the current user, browser sign-in and the device flow. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf } from '../http/auth.js';
import { NdsError } from '../core/errors.js';
import { bearerSecurity, errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { assertAccountUsable } from '../accounts/account-gates.js';
import { findApiKey, listLiveApiKeys, mintApiKey, presentApiKey, revokeApiKey } from '../accounts/api-keys.js';
import { browserSignInRoutes } from './browser-sign-in-routes.js';
import { deprecatedRoutes } from './deprecated-routes.js';
import { deviceRoutes } from './device-routes.js';
import { KeyIdParam, KeyNameBody, KeySchema, LoginBody, UserSchema } from './account-schemas.js';
import { presentUser, recordUploadAccessRequest } from '../accounts/users.js';

const listKeys = createRoute({
  method: 'get',
  path: '/auth/keys',
  summary: "List this account's live API keys",
  security: bearerSecurity,
  middleware: [authenticate('any')] as const,
  responses: { 200: jsonResponse(z.object({ keys: z.array(KeySchema) }), 'Live keys'), 401: errorResponses[401] },
});

const createKey = createRoute({
  method: 'post',
  path: '/auth/keys',
  summary: 'Mint a named API key (paste-key fallback); refused for service and test accounts',
  security: bearerSecurity,
  middleware: [authenticate('any')] as const,
  request: jsonBody(KeyNameBody),
  responses: {
    201: jsonResponse(z.object({ api_key: z.string(), key: KeySchema }), 'The new key, shown once'),
    403: errorResponses[403],
    409: errorResponses[409],
  },
});

const revokeCurrent = createRoute({
  method: 'delete',
  path: '/auth/keys/current',
  summary: 'Revoke the bearer key that authenticated this request',
  security: bearerSecurity,
  middleware: [authenticate('key')] as const,
  responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked'), 401: errorResponses[401] },
});

const revokeById = createRoute({
  method: 'delete',
  path: '/auth/keys/{id}',
  summary: 'Revoke one of your keys by row id',
  security: bearerSecurity,
  middleware: [authenticate('any')] as const,
  request: { params: KeyIdParam },
  responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked'), 404: errorResponses[404] },
});

const keyLogin = createRoute({
  method: 'post',
  path: '/auth/login',
  summary: 'Validate an API key (bearer header or body `api_key`)',
  request: jsonBody(LoginBody, false),
  responses: { 200: jsonResponse(z.object({ valid: z.literal(true), user: UserSchema, key: KeySchema }), 'The key is valid'), 401: errorResponses[401] },
});

const me = createRoute({
  method: 'get',
  path: '/users/me',
  summary: 'The authenticated user',
  security: bearerSecurity,
  middleware: [authenticate('any')] as const,
  responses: { 200: jsonResponse(UserSchema, 'The user'), 401: errorResponses[401] },
});

const requestUploadAccess = createRoute({
  method: 'post',
  path: '/users/me/upload-access',
  summary: 'Ask an administrator for upload access (shows in GET /admin/users)',
  security: bearerSecurity,
  middleware: [authenticate('any')] as const,
  responses: { 200: jsonResponse(UserSchema, 'The user, with the request recorded'), 401: errorResponses[401] },
});

export function accountsRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  // Answers of these routes can carry keys, codes or account state: never cache them.
  app.use('/auth/*', async function noStore(c, next) {
    await next();
    c.header('Cache-Control', 'no-store');
  });

  app.openapi(listKeys, async (c) => {
    const caller = callerOf(c);
    const keys = await listLiveApiKeys(c.var.deps.db, caller.user.id);
    return c.json({ keys: keys.map((k) => presentApiKey(k, caller.key?.id)) }, 200);
  });

  app.openapi(createKey, async (c) => {
    const caller = callerOf(c);
    if (caller.user.kind !== 'person') throw new NdsError('service_account');
    const { name } = c.req.valid('json');
    const { apiKey, row } = await mintApiKey(c.var.deps.db, caller.user.id, name, 'named');
    return c.json({ api_key: apiKey, key: presentApiKey(row, caller.key?.id) }, 201);
  });

  app.openapi(revokeCurrent, async (c) => {
    const caller = callerOf(c);
    if (!caller.key) throw new NdsError('bearer_required');
    await revokeApiKey(c.var.deps.db, caller.user.id, caller.key.id);
    return c.json({ revoked: caller.key.id }, 200);
  });

  app.openapi(revokeById, async (c) => {
    const caller = callerOf(c);
    const { id } = c.req.valid('param');
    await revokeApiKey(c.var.deps.db, caller.user.id, id);
    return c.json({ revoked: id }, 200);
  });

  app.openapi(keyLogin, async (c) => {
    const body = c.req.valid('json') ?? {};
    const header = c.req.header('authorization');
    const token = body.api_key ?? (header?.match(/^Bearer\s+(\S+)$/i)?.[1]);
    if (!token) throw new NdsError('unauthorized');
    const found = await findApiKey(c.var.deps.db, token, c.var.deps.keyCache);
    if (!found) throw new NdsError('unauthorized', { message: 'The API key is not valid or was revoked.' });
    if (found.user.status === 'revoked') throw new NdsError('unauthorized', { message: "This account's access has been revoked." });
    assertAccountUsable(found.user);
    return c.json({ valid: true as const, user: presentUser(found.user), key: presentApiKey(found.key, found.key.id) }, 200);
  });

  app.openapi(me, (c) => c.json(presentUser(callerOf(c).user), 200));

  app.openapi(requestUploadAccess, async (c) => {
    const user = callerOf(c).user;
    return c.json(presentUser(await recordUploadAccessRequest(c.var.deps.db, user, c.var.deps.clock.now())), 200);
  });

  app.route('/', deviceRoutes());
  app.route('/', browserSignInRoutes());
  app.route('/', deprecatedRoutes());
  return app;
}
