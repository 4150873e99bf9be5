/** Account routes: API keys, key login, the current user and its upload-access request. */
import { z } from '@hono/zod-openapi';
import { assertAccountUsable } from '../accounts/account-gates.js';
import { findApiKey, listLiveApiKeys, mintApiKey, presentApiKey, revokeApiKey } from '../accounts/api-keys.js';
import { requestUploadAccess } from '../accounts/upload-access.js';
import { presentUser } from '../accounts/users.js';
import { NdsError } from '../core/errors.js';
import { callerOf } from '../http/auth.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { KeyIdParam, KeyNameBody, KeySchema, LoginBody, UserSchema } from './account-schemas.js';

export const accountRoutes: Route[] = [
  route({
    method: 'get',
    path: '/auth/keys',
    summary: "List this account's live API keys",
    access: 'any',
    responses: { 200: jsonResponse(z.object({ keys: z.array(KeySchema) }), 'Live keys') },
    handler: async (c) => {
      const caller = callerOf(c);
      const keys = await listLiveApiKeys(c.var.deps.db, caller.user.id);
      return c.json({ keys: keys.map((k) => presentApiKey(k, caller.key?.id)) }, 200);
    },
  }),

  route({
    method: 'post',
    path: '/auth/keys',
    summary: 'Mint a named API key (paste-key fallback); refused for service and test accounts',
    access: 'any',
    body: { schema: KeyNameBody },
    responses: { 201: jsonResponse(z.object({ api_key: z.string(), key: KeySchema }), 'The new key, shown once'), 409: jsonResponse(z.any(), 'Too many keys') },
    handler: async (c, { body }) => {
      const caller = callerOf(c);
      if (caller.user.kind !== 'person') throw new NdsError('service_account');
      const { apiKey, row } = await mintApiKey(c.var.deps.db, caller.user.id, body.name, 'named');
      return c.json({ api_key: apiKey, key: presentApiKey(row, caller.key?.id) }, 201);
    },
  }),

  route({
    method: 'delete',
    path: '/auth/keys/current',
    summary: 'Revoke the bearer key that authenticated this request',
    access: 'key',
    responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked') },
    handler: async (c) => {
      const caller = callerOf(c);
      if (!caller.key) throw new NdsError('bearer_required');
      await revokeApiKey(c.var.deps.db, caller.user.id, caller.key.id);
      return c.json({ revoked: caller.key.id }, 200);
    },
  }),

  route({
    method: 'delete',
    path: '/auth/keys/:id',
    summary: 'Revoke one of your keys by row id',
    access: 'any',
    params: KeyIdParam,
    responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked') },
    handler: async (c, { params }) => {
      await revokeApiKey(c.var.deps.db, callerOf(c).user.id, params.id);
      return c.json({ revoked: params.id }, 200);
    },
  }),

  route({
    method: 'post',
    path: '/auth/login',
    summary: 'Validate an API key (bearer header or body `api_key`)',
    access: 'none',
    body: { schema: LoginBody, optional: true },
    responses: { 200: jsonResponse(z.object({ valid: z.literal(true), user: UserSchema, key: KeySchema }), 'The key is valid') },
    handler: async (c, { body }) => {
      const header = c.req.header('authorization');
      const token = body?.api_key ?? header?.match(/^Bearer\s+(\S+)$/i)?.[1];
      if (!token) throw new NdsError('unauthorized');
      const found = await findApiKey(c.var.deps.db, token, c.var.deps.keyCache);
      if (!found) throw new NdsError('unauthorized', { message: 'The API key is not valid or was revoked.' });
      if (found.user.status === 'revoked') throw new NdsError('unauthorized', { message: "This account's access has been revoked." });
      assertAccountUsable(found.user);
      return c.json({ valid: true as const, user: presentUser(found.user), key: presentApiKey(found.key, found.key.id) }, 200);
    },
  }),

  route({
    method: 'get',
    path: '/users/me',
    summary: 'The authenticated user',
    access: 'any',
    responses: { 200: jsonResponse(UserSchema, 'The user') },
    handler: (c) => c.json(presentUser(callerOf(c).user), 200),
  }),

  route({
    method: 'post',
    path: '/users/me/upload-access',
    summary: 'Ask an administrator for upload access (shows in GET /admin/users and on /admin; the administrators get a mail)',
    access: 'any',
    responses: { 200: jsonResponse(UserSchema, 'The user, with the request recorded') },
    handler: async (c) => c.json(presentUser(await requestUploadAccess(c.var.deps, callerOf(c).user)), 200),
  }),
];
