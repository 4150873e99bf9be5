/**
 * Administration routes of accounts (seed §4 "Administration", §5.7): admin or owner role;
 * kind changes and the keys of other accounts are for the owner only. Mounted under `/admin`.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf, requireRole } from '../http/auth.js';
import { clientIp } from '../http/client-ip.js';
import { bearerSecurity, errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { approveUser, changeUserKind, listAudit, listKeysOfAccount, listUsers, mintKeyForAccount, revokeKeyOfAccount, revokeUser, type Actor } from '../accounts/admin-users.js';
import { presentApiKey } from '../accounts/api-keys.js';
import { KeyNameBody, KeySchema, UserSchema } from './account-schemas.js';
import { getUserByUsername, presentUser } from '../accounts/users.js';

const Username = z.object({ username: z.string().min(1).max(39).openapi({ param: { name: 'username', in: 'path' } }) });
const Kind = z.enum(['person', 'service', 'test']);
const AdminUser = UserSchema.extend({ live_keys: z.number().int(), approved_at: z.string().nullable(), revoked_at: z.string().nullable() }).openapi('AdminUser');

const admin = [authenticate('any'), requireRole('admin')];
const owner = [authenticate('any'), requireRole('owner')];

const routes = {
  list: createRoute({
    method: 'get',
    path: '/users',
    summary: 'List users with statuses, tiers, roles, kinds and open upload-access requests',
    security: bearerSecurity,
    middleware: admin,
    request: {
      query: z.object({
        status: z.enum(['pending', 'verified', 'approved', 'revoked']).optional(),
        kind: Kind.optional(),
        role: z.enum(['member', 'admin', 'owner']).optional(),
        requests: z.enum(['true', 'false']).optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        offset: z.coerce.number().int().min(0).default(0),
      }),
    },
    responses: {
      200: jsonResponse(z.object({ users: z.array(AdminUser), total: z.number().int(), open_requests: z.array(z.object({ username: z.string(), requested_at: z.string() })) }), 'Users'),
      403: errorResponses[403],
    },
  }),
  show: createRoute({
    method: 'get',
    path: '/users/{username}',
    summary: 'One user',
    security: bearerSecurity,
    middleware: admin,
    request: { params: Username },
    responses: { 200: jsonResponse(AdminUser, 'The user'), 404: errorResponses[404] },
  }),
  approve: createRoute({
    method: 'post',
    path: '/approve/{username}',
    summary: 'Grant upload access to a verified user',
    security: bearerSecurity,
    middleware: admin,
    request: { params: Username },
    responses: { 200: jsonResponse(AdminUser, 'Approved'), 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  }),
  revoke: createRoute({
    method: 'post',
    path: '/revoke/{username}',
    summary: "Revoke a user's access (keys revoked, sessions ended)",
    security: bearerSecurity,
    middleware: admin,
    request: { params: Username },
    responses: { 200: jsonResponse(AdminUser.extend({ keys_revoked: z.number().int() }), 'Revoked'), 403: errorResponses[403], 404: errorResponses[404] },
  }),
  kind: createRoute({
    method: 'post',
    path: '/users/{username}/kind',
    summary: 'Change the account kind (owner only); compare-and-set on the previous kind',
    security: bearerSecurity,
    middleware: owner,
    request: { params: Username, ...jsonBody(z.object({ kind: Kind, expected_kind: Kind.optional() })) },
    responses: { 200: jsonResponse(AdminUser, 'Changed'), 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  }),
  mintKey: createRoute({
    method: 'post',
    path: '/users/{username}/keys',
    summary: 'Mint a key for a service or test account (owner only)',
    security: bearerSecurity,
    middleware: owner,
    request: { params: Username, ...jsonBody(KeyNameBody) },
    responses: { 201: jsonResponse(z.object({ api_key: z.string(), key: KeySchema }), 'The key, shown once'), 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  }),
  listKeys: createRoute({
    method: 'get',
    path: '/users/{username}/keys',
    summary: "List a user's live keys (owner only; any kind)",
    security: bearerSecurity,
    middleware: owner,
    request: { params: Username },
    responses: { 200: jsonResponse(z.object({ keys: z.array(KeySchema) }), 'Live keys'), 404: errorResponses[404] },
  }),
  revokeKey: createRoute({
    method: 'delete',
    path: '/users/{username}/keys/{id}',
    summary: "Revoke one of a user's keys (owner only; any kind)",
    security: bearerSecurity,
    middleware: owner,
    request: { params: Username.extend({ id: z.coerce.number().int().positive().openapi({ param: { name: 'id', in: 'path' } }) }) },
    responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked'), 404: errorResponses[404] },
  }),
  audit: createRoute({
    method: 'get',
    path: '/audit',
    summary: 'The audit log of admin actions, newest first',
    security: bearerSecurity,
    middleware: admin,
    request: { query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), before: z.coerce.number().int().positive().optional() }) },
    responses: {
      200: jsonResponse(
        z.object({
          entries: z.array(
            z.object({
              id: z.number(),
              actor_username: z.string().nullable(),
              action: z.string(),
              target: z.string().nullable(),
              details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
              ip: z.string().nullable(),
              created_at: z.string(),
            }),
          ),
        }),
        'Entries',
      ),
    },
  }),
};

function actorOf(c: Context<AppEnv>): Actor {
  return { user: callerOf(c).user, ip: clientIp(c) };
}

function presentAdminUser(user: Parameters<typeof presentUser>[0]) {
  return {
    ...presentUser(user),
    live_keys: user.live_key_count,
    approved_at: user.approved_at ? new Date(user.approved_at).toISOString() : null,
    revoked_at: user.revoked_at ? new Date(user.revoked_at).toISOString() : null,
  };
}

export function adminRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.use('*', async function noStore(c, next) {
    await next();
    c.header('Cache-Control', 'no-store');
  });

  app.openapi(routes.list, async (c) => {
    const q = c.req.valid('query');
    const { db } = c.var.deps;
    const { users, total } = await listUsers(db, { ...q, requests: q.requests === 'true' });
    const open = await listUsers(db, { requests: true, limit: 500, offset: 0 });
    return c.json(
      {
        users: users.map(presentAdminUser),
        total,
        open_requests: open.users.map((u) => ({ username: u.username, requested_at: new Date(u.upload_access_requested_at!).toISOString() })),
      },
      200,
    );
  });

  app.openapi(routes.show, async (c) => c.json(presentAdminUser(await getUserByUsername(c.var.deps.db, c.req.valid('param').username)), 200));

  app.openapi(routes.approve, async (c) => c.json(presentAdminUser(await approveUser(c.var.deps.db, actorOf(c), c.req.valid('param').username, c.var.deps.clock.now())), 200));

  app.openapi(routes.revoke, async (c) => {
    const { user, keysRevoked } = await revokeUser(c.var.deps.db, actorOf(c), c.req.valid('param').username, c.var.deps.clock.now());
    return c.json({ ...presentAdminUser(user), keys_revoked: keysRevoked }, 200);
  });

  app.openapi(routes.kind, async (c) => {
    const { kind, expected_kind } = c.req.valid('json');
    return c.json(presentAdminUser(await changeUserKind(c.var.deps.db, actorOf(c), c.req.valid('param').username, kind, expected_kind, c.var.deps.clock.now())), 200);
  });

  app.openapi(routes.mintKey, async (c) => {
    const { apiKey, row } = await mintKeyForAccount(c.var.deps.db, actorOf(c), c.req.valid('param').username, c.req.valid('json').name);
    return c.json({ api_key: apiKey, key: presentApiKey(row) }, 201);
  });

  app.openapi(routes.listKeys, async (c) => {
    const keys = await listKeysOfAccount(c.var.deps.db, c.req.valid('param').username);
    return c.json({ keys: keys.map((k) => presentApiKey(k, callerOf(c).key?.id)) }, 200);
  });

  app.openapi(routes.revokeKey, async (c) => {
    const { username, id } = c.req.valid('param');
    await revokeKeyOfAccount(c.var.deps.db, actorOf(c), username, id);
    return c.json({ revoked: id }, 200);
  });

  app.openapi(routes.audit, async (c) => {
    const { limit, before } = c.req.valid('query');
    const entries = await listAudit(c.var.deps.db, limit, before);
    const presented = entries.map((e) => ({
      id: e.id,
      actor_username: e.actor_username,
      action: e.action,
      target: e.target,
      // Audit details are small JSON objects written by `audit()`.
      details: (e.details ?? {}) as Record<string, string | number | boolean | null>,
      ip: e.ip,
      created_at: new Date(e.created_at).toISOString(),
    }));
    return c.json({ entries: presented }, 200);
  });

  return app;
}
