/**
 * `POST /datasets/:id/read-grant`: a short-lived grant for the browser gateway to read a dataset's Zarr copy,
 * private ones included (`datasets/read-grant.ts`). The dataset page embeds one for its viewer and the viewer
 * asks here for a fresh one before it expires.
 */
import { signInOf } from '../accounts/sign-in-of-credential.js';
import { z } from '@hono/zod-openapi';
import { issueReadGrant, READ_GRANT_SECONDS } from '../datasets/read-grant.js';
import { callerOf } from '../http/auth.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { IdParam } from './dataset-schemas.js';

const ReadGrantAnswer = z
  .object({
    grant: z.string().openapi({ description: 'Send as `Authorization: Bearer <grant>` on GET/HEAD of the dataset\'s objects at the gateway' }),
    expires_at: z.string().openapi({ description: `ISO 8601; ${READ_GRANT_SECONDS / 60} minutes after issue` }),
    expires_in: z.number().int().openapi({ description: 'Seconds until expires_at (for clients whose clock differs from the server\'s)' }),
  })
  .openapi('ReadGrant');

export const readGrantRoutes: Route[] = [
  route({
    method: 'post',
    path: '/datasets/:id/read-grant',
    summary: "A short-lived grant to read a dataset's Zarr copy through the gateway (private previews)",
    access: 'any',
    params: IdParam,
    responses: { 200: jsonResponse(ReadGrantAnswer, 'The grant and when it expires'), 404: errorResponses[404] },
    handler: async (c, { params }) => {
      const { grant, expiresAt } = await issueReadGrant(c.var.deps, params.id, callerOf(c).user, signInOf(c.var.caller));
      c.header('Cache-Control', 'no-store');
      return c.json({ grant, expires_at: expiresAt.toISOString(), expires_in: Math.round((expiresAt.getTime() - c.var.deps.clock.now().getTime()) / 1000) }, 200);
    },
  }),
];
