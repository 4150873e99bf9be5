import { z } from '@hono/zod-openapi';

export const UserSchema = z
  .object({
    username: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    status: z.enum(['pending', 'verified', 'approved', 'revoked']),
    tier: z.enum(['basic', 'uploader']),
    role: z.enum(['member', 'admin', 'owner']),
    kind: z.enum(['person', 'service', 'test']),
    identity_conflict: z.boolean(),
    upload_access_requested: z.boolean(),
    sandbox_completed: z.boolean(),
    created_at: z.string(),
  })
  .openapi('User');

export const KeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    prefix: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    current: z.boolean(),
  })
  .openapi('ApiKey');

export const KeyNameBody = z.object({ name: z.string().trim().min(1).max(100) }).openapi('KeyName');

export const KeyIdParam = z.object({ id: z.coerce.number().int().positive().openapi({ param: { name: 'id', in: 'path' } }) });

export const LoginBody = z.object({ api_key: z.string().min(1).max(200).optional() });
