/** Routes of device sign-in (RFC 8628; docs/api.md). */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { callerOf } from '../http/auth.js';
import { clientIp, clientLimitKey } from '../http/client-ip.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { guardCodeGuess } from '../accounts/device-limits.js';
import { spend } from '../accounts/sign-in-limits.js';
import { confirmDeviceCode, denyDeviceCode, lookupDeviceCode, pollDeviceToken, startDeviceSignIn } from '../accounts/device-flow.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** JSON from nds's CLI, or an RFC 8628 section 3.1 form from an OAuth client: `client_id` and `scope` are taken and not checked. */
const StartBody = z
  .object({
    machine_name: z.string().trim().max(100).optional(),
    client_id: z.string().max(200).optional(),
    scope: z.string().max(1000).optional(),
  })
  .openapi('DeviceStartRequest');
const StartAnswer = z
  .object({
    device_code: z.string(),
    user_code: z.string(),
    verification_uri: z.string(),
    verification_uri_complete: z.string(),
    expires_in: z.number().int(),
    interval: z.number().int(),
  })
  .openapi('DeviceStart');
const CodeBody = z.object({ code: z.string().min(1).max(32) }).openapi('DeviceCodeBody');

const TokenRequest = z.object({
  device_code: z.string({ message: 'required string' }).min(1, 'required string').max(200),
  client_id: z.string().max(200).optional(),
  grant_type: z.literal(DEVICE_GRANT, { message: `must be ${DEVICE_GRANT}` }).optional(),
});

const decision = (path: string, summary: string, act: typeof confirmDeviceCode) =>
  route({
    method: 'post',
    path,
    summary,
    access: 'pending-session',
    body: { schema: CodeBody },
    responses: { 200: jsonResponse(z.object({ ok: z.literal(true) }), 'Done'), 404: errorResponses[404], 409: errorResponses[409] },
    handler: async (c, { body }) => {
      const { db, clock } = c.var.deps;
      await guarded(c, () => act(db, body.code, callerOf(c).user, clock.now()));
      return c.json({ ok: true as const }, 200);
    },
  });

/** Every look-up, confirm or deny of a typed code counts against the session and the IP when it names nothing. */
function guarded<T>(c: Context<AppEnv>, action: () => Promise<T>): Promise<T> {
  return guardCodeGuess(c.var.deps.deviceLimits, { sessionHash: callerOf(c).sessionHash, ip: clientLimitKey(c) }, action);
}

/** RFC 8414 metadata: what an OAuth 2.0 client library needs to find the device flow by itself. */
const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    device_authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
  })
  .openapi('AuthorizationServerMetadata');

export const deviceRoutes: Route[] = [
  route({
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414): the device flow endpoints, client id `nds`',
    access: 'none',
    responses: { 200: jsonResponse(AuthorizationServerMetadata, 'Metadata') },
    handler: (c) => {
      const base = c.var.deps.config.publicUrl;
      return c.json(
        {
          issuer: base,
          device_authorization_endpoint: `${base}/auth/device/start`,
          token_endpoint: `${base}/auth/device/token`,
          grant_types_supported: [DEVICE_GRANT],
          token_endpoint_auth_methods_supported: ['none'],
          response_types_supported: [],
        },
        200,
      );
    },
  }),

  route({
    method: 'post',
    path: '/auth/device/start',
    summary: 'Mint a device code and an 8-character user code',
    access: 'none',
    body: { schema: StartBody, optional: true, media: ['json', 'form'] },
    responses: { 200: jsonResponse(StartAnswer, 'A new code pair, valid 10 minutes'), 429: errorResponses[400] },
    handler: async (c, { body }) => {
      const ip = clientIp(c);
      await spend([c.var.deps.deviceLimits.start, clientLimitKey(c)]);
      const { db, clock, config } = c.var.deps;
      const answer = await startDeviceSignIn(db, {
        now: clock.now(),
        publicUrl: config.publicUrl,
        intervalS: config.devicePollIntervalS,
        machineName: body?.machine_name,
        ip,
      });
      return c.json(answer, 200);
    },
  }),

  route({
    method: 'post',
    path: '/auth/device/token',
    summary: 'Poll for the API key once the code is confirmed (JSON or RFC 8628 form body)',
    access: 'none',
    body: { schema: TokenRequest, media: ['json', 'form'] },
    responses: {
      200: jsonResponse(
        z.object({ access_token: z.string(), token_type: z.literal('Bearer'), api_key: z.string(), key: z.any(), user: z.any() }),
        'The key, minted now (`access_token` and `api_key` are the same key)',
      ),
      400: jsonResponse(z.object({ error: z.enum(['authorization_pending', 'slow_down', 'expired_token', 'access_denied', 'invalid_grant']), reason: z.string().optional(), message: z.string() }), 'Not (yet) granted'),
    },
    handler: async (c, { body }) => {
      const { db, clock } = c.var.deps;
      const grant = await pollDeviceToken(db, body.device_code, clock.now());
      // RFC 6749 section 5.1 names beside nds's own, so that OAuth client libraries read the same answer.
      return c.json({ access_token: grant.api_key, token_type: 'Bearer' as const, ...grant }, 200);
    },
  }),

  route({
    method: 'get',
    path: '/auth/device/lookup',
    summary: 'Read what a user code names, before confirming or denying it (browser session)',
    access: 'pending-session',
    query: z.object({ code: z.string().min(1).max(32) }),
    responses: {
      200: jsonResponse(z.object({ user_code: z.string(), state: z.string(), machine_name: z.string().nullable(), requested_at: z.string(), expires_in: z.number(), account: z.object({ username: z.string(), email_masked: z.string() }), refusal: z.object({ code: z.string(), message: z.string() }).nullable() }), 'The code'),
      404: errorResponses[404],
      409: errorResponses[409],
    },
    handler: async (c, { query }) => {
      const { db, clock } = c.var.deps;
      return c.json(await guarded(c, () => lookupDeviceCode(db, query.code, callerOf(c).user, clock.now())), 200);
    },
  }),

  decision('/auth/device/confirm', 'Authorize a user code for the signed-in account (mints nothing)', confirmDeviceCode),
  decision('/auth/device/deny', 'Decline a user code', denyDeviceCode),
];
