/**
 * Administration routes of accounts (docs/api.md): admin or owner role;
 * kind changes and the keys of other accounts are for the owner only.
 */
import { z } from '@hono/zod-openapi';
import { denyUploadAccess, grantUploadAccess } from '../accounts/upload-access.js';
import { changeUserKind, listAudit, listKeysOfAccount, listUsers, mintKeyForAccount, revokeKeyOfAccount, revokeUser, setStorageQuota } from '../accounts/admin-users.js';
import { presentApiKey } from '../accounts/api-keys.js';
import { getUserByUsername, presentUser } from '../accounts/users.js';
import { actorOf, callerOf } from '../http/auth.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { KeyNameBody, KeySchema, UserSchema } from './account-schemas.js';
import { StorageUseSchema } from './dataset-schemas.js';
import { storageUseOf } from '../datasets/storage-quota.js';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';

const Username = z.object({ username: z.string().min(1).max(39).openapi({ param: { name: 'username', in: 'path' } }) });
const Kind = z.enum(['person', 'service', 'test']);
const AdminUser = UserSchema.extend({ live_keys: z.number().int(), approved_at: z.string().nullable(), revoked_at: z.string().nullable() }).openapi('AdminUser');
const AuditEntry = z.object({
  id: z.number(),
  actor_username: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  ip: z.string().nullable(),
  created_at: z.string(),
});

const AdminStorage = StorageUseSchema.extend({
  username: z.string(),
  account_quota_bytes: z.number().int().nullable().openapi({ description: "The limit an administrator set for this account (0: none); null: the settings' apply" }),
}).openapi('AdminStorage');

async function presentStorage(deps: Deps, user: User) {
  return { username: user.username, ...(await storageUseOf(deps, user)), account_quota_bytes: user.storage_quota_bytes === null ? null : Number(user.storage_quota_bytes) };
}

function presentAdminUser(user: Parameters<typeof presentUser>[0]) {
  return {
    ...presentUser(user),
    live_keys: user.live_key_count,
    approved_at: user.approved_at ? new Date(user.approved_at).toISOString() : null,
    revoked_at: user.revoked_at ? new Date(user.revoked_at).toISOString() : null,
  };
}

export const adminRoutes: Route[] = [
  route({
    method: 'get',
    path: '/admin/users',
    summary: 'List users with statuses, tiers, roles, kinds and open upload-access requests',
    access: 'admin',
    query: z.object({
      status: z.enum(['pending', 'verified', 'approved', 'revoked']).optional(),
      kind: Kind.optional(),
      role: z.enum(['member', 'admin', 'owner']).optional(),
      requests: z.enum(['true', 'false']).optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100),
      offset: z.coerce.number().int().min(0).default(0),
    }),
    responses: {
      200: jsonResponse(z.object({ users: z.array(AdminUser), total: z.number().int(), open_requests: z.array(z.object({ username: z.string(), requested_at: z.string() })) }), 'Users'),
    },
    handler: async (c, { query }) => {
      const { db } = c.var.deps;
      const { users, total } = await listUsers(db, { ...query, requests: query.requests === 'true' });
      const open = await listUsers(db, { requests: true, limit: 500, offset: 0 });
      return c.json(
        {
          users: users.map(presentAdminUser),
          total,
          open_requests: open.users.map((u) => ({ username: u.username, requested_at: new Date(u.upload_access_requested_at!).toISOString() })),
        },
        200,
      );
    },
  }),

  route({
    method: 'get',
    path: '/admin/users/:username',
    summary: 'One user',
    access: 'admin',
    params: Username,
    responses: { 200: jsonResponse(AdminUser, 'The user') },
    handler: async (c, { params }) => c.json(presentAdminUser(await getUserByUsername(c.var.deps.db, params.username)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/approve/:username',
    summary: 'Grant upload access to a verified user (the user gets a mail)',
    access: 'admin',
    params: Username,
    responses: { 200: jsonResponse(AdminUser, 'Approved') },
    handler: async (c, { params }) => c.json(presentAdminUser(await grantUploadAccess(c.var.deps, actorOf(c), params.username)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/deny/:username',
    summary: "Deny a user's open request for upload access, with a reason the user gets by mail (they may ask again)",
    access: 'admin',
    params: Username,
    body: { schema: z.object({ reason: z.string().trim().min(1).max(2000) }) },
    responses: { 200: jsonResponse(AdminUser, 'Denied: the request is closed'), 409: errorResponses[409] },
    handler: async (c, { params, body }) => c.json(presentAdminUser(await denyUploadAccess(c.var.deps, actorOf(c), params.username, body.reason)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/revoke/:username',
    summary: "Revoke a user's access (keys revoked, sessions ended)",
    access: 'admin',
    params: Username,
    responses: { 200: jsonResponse(AdminUser.extend({ keys_revoked: z.number().int() }), 'Revoked') },
    handler: async (c, { params }) => {
      const { user, keysRevoked } = await revokeUser(c.var.deps.db, actorOf(c), params.username, c.var.deps.clock.now());
      return c.json({ ...presentAdminUser(user), keys_revoked: keysRevoked }, 200);
    },
  }),

  route({
    method: 'post',
    path: '/admin/users/:username/kind',
    summary: 'Change the account kind (owner only); compare-and-set on the previous kind',
    access: 'owner',
    params: Username,
    body: { schema: z.object({ kind: Kind, expected_kind: Kind.optional() }) },
    responses: { 200: jsonResponse(AdminUser, 'Changed') },
    handler: async (c, { params, body }) => c.json(presentAdminUser(await changeUserKind(c.var.deps.db, actorOf(c), params.username, body.kind, body.expected_kind, c.var.deps.clock.now())), 200),
  }),

  route({
    method: 'get',
    path: '/admin/users/:username/storage',
    summary: "What a user's datasets hold against the storage quotas, and the user's own limit if an administrator set one",
    access: 'admin',
    params: Username,
    responses: { 200: jsonResponse(AdminStorage, 'Bytes held, and the limits (null: none)') },
    handler: async (c, { params }) => c.json(await presentStorage(c.var.deps, await getUserByUsername(c.var.deps.db, params.username)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/users/:username/storage-quota',
    summary: "Set a user's storage limit (all their datasets, sandbox ones included; 0: none) in place of the settings, or null to go back to them",
    access: 'admin',
    params: Username,
    body: { schema: z.object({ quota_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable() }) },
    responses: { 200: jsonResponse(AdminStorage, 'Set') },
    handler: async (c, { params, body }) => {
      const user = await setStorageQuota(c.var.deps.db, actorOf(c), params.username, body.quota_bytes, c.var.deps.clock.now());
      return c.json(await presentStorage(c.var.deps, user), 200);
    },
  }),

  route({
    method: 'post',
    path: '/admin/users/:username/keys',
    summary: 'Mint a key for a service or test account (owner only)',
    access: 'owner',
    params: Username,
    body: { schema: KeyNameBody },
    responses: { 201: jsonResponse(z.object({ api_key: z.string(), key: KeySchema }), 'The key, shown once') },
    handler: async (c, { params, body }) => {
      const { apiKey, row } = await mintKeyForAccount(c.var.deps.db, actorOf(c), params.username, body.name);
      return c.json({ api_key: apiKey, key: presentApiKey(row) }, 201);
    },
  }),

  route({
    method: 'get',
    path: '/admin/users/:username/keys',
    summary: "List a user's live keys (owner only; any kind)",
    access: 'owner',
    params: Username,
    responses: { 200: jsonResponse(z.object({ keys: z.array(KeySchema) }), 'Live keys') },
    handler: async (c, { params }) => {
      const keys = await listKeysOfAccount(c.var.deps.db, params.username);
      return c.json({ keys: keys.map((k) => presentApiKey(k, callerOf(c).key?.id)) }, 200);
    },
  }),

  route({
    method: 'delete',
    path: '/admin/users/:username/keys/:id',
    summary: "Revoke one of a user's keys (owner only; any kind)",
    access: 'owner',
    params: Username.extend({ id: z.coerce.number().int().positive().openapi({ param: { name: 'id', in: 'path' } }) }),
    responses: { 200: jsonResponse(z.object({ revoked: z.number().int() }), 'Revoked') },
    handler: async (c, { params }) => {
      await revokeKeyOfAccount(c.var.deps.db, actorOf(c), params.username, params.id);
      return c.json({ revoked: params.id }, 200);
    },
  }),

  route({
    method: 'get',
    path: '/admin/audit',
    summary: 'The audit log of admin actions, newest first',
    access: 'admin',
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), before: z.coerce.number().int().positive().optional() }),
    responses: { 200: jsonResponse(z.object({ entries: z.array(AuditEntry) }), 'Entries') },
    handler: async (c, { query }) => {
      const entries = await listAudit(c.var.deps.db, query.limit, query.before);
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
    },
  }),
];
