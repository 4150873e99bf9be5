/** Routes of device sign-in (RFC 8628; seed §3, §4, §7; CONTRACT §2). */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf } from '../http/auth.js';
import { clientIp } from '../http/client-ip.js';
import { NdsError } from '../core/errors.js';
import { errorResponses, jsonBody, jsonResponse, sessionSecurity } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { guardCodeGuess } from '../accounts/device-limits.js';
import { confirmDeviceCode, denyDeviceCode, lookupDeviceCode, pollDeviceToken, startDeviceSignIn } from '../accounts/device-flow.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const StartBody = z.object({ machine_name: z.string().trim().max(100).optional() }).openapi('DeviceStartRequest');
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

const start = createRoute({
  method: 'post',
  path: '/auth/device/start',
  summary: 'Mint a device code and an 8-character user code',
  request: jsonBody(StartBody, false),
  responses: { 200: jsonResponse(StartAnswer, 'A new code pair, valid 10 minutes'), 429: errorResponses[400] },
});

const lookup = createRoute({
  method: 'get',
  path: '/auth/device/lookup',
  summary: 'Read what a user code names, before confirming or denying it (browser session)',
  security: sessionSecurity,
  middleware: [authenticate('session', { allowPending: true })] as const,
  request: { query: z.object({ code: z.string().min(1).max(32) }) },
  responses: {
    200: jsonResponse(z.object({ user_code: z.string(), state: z.string(), machine_name: z.string().nullable(), requested_at: z.string(), expires_in: z.number(), account: z.object({ username: z.string(), email_masked: z.string() }), refusal: z.object({ code: z.string(), message: z.string() }).nullable() }), 'The code'),
    404: errorResponses[404],
    409: errorResponses[409],
  },
});

const decision = (path: string, summary: string) =>
  createRoute({
    method: 'post',
    path,
    summary,
    security: sessionSecurity,
    middleware: [authenticate('session', { allowPending: true })] as const,
    request: jsonBody(CodeBody),
    responses: { 200: jsonResponse(z.object({ ok: z.literal(true) }), 'Done'), 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  });

const confirm = decision('/auth/device/confirm', 'Authorize a user code for the signed-in account (mints nothing)');
const deny = decision('/auth/device/deny', 'Decline a user code');

/** Reads `device_code` from a JSON body or from the RFC's form body (`grant_type` + `device_code`). */
async function readTokenRequest(c: Context<AppEnv>): Promise<string> {
  const type = c.req.header('content-type') ?? '';
  let fields: Record<string, unknown>;
  try {
    if (type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data')) {
      fields = Object.fromEntries(Object.entries(await c.req.parseBody()).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
    } else {
      fields = (await c.req.json()) as Record<string, unknown>;
    }
  } catch {
    throw new NdsError('validation_failed', { details: ['body: expected JSON {"device_code": "..."} or a form body'] });
  }
  if (!fields || typeof fields !== 'object') throw new NdsError('validation_failed', { details: ['body: expected an object'] });
  if (fields.grant_type !== undefined && fields.grant_type !== DEVICE_GRANT) {
    throw new NdsError('validation_failed', { details: [`grant_type: must be ${DEVICE_GRANT}`] });
  }
  const code = fields.device_code;
  if (typeof code !== 'string' || code.length === 0 || code.length > 200) {
    throw new NdsError('validation_failed', { details: ['device_code: required string'] });
  }
  return code;
}

export function deviceRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  const guarded = <T>(c: Context<AppEnv>, action: () => Promise<T>): Promise<T> =>
    guardCodeGuess(c.var.deps.deviceLimits, { sessionHash: callerOf(c).sessionHash, ip: clientIp(c) }, action);

  app.openapi(start, async (c) => {
    const ip = clientIp(c);
    const { start: startLimit } = c.var.deps.deviceLimits;
    startLimit.check(ip);
    startLimit.hit(ip);
    const body = c.req.valid('json') ?? {};
    const { db, clock, config } = c.var.deps;
    const answer = await startDeviceSignIn(db, {
      now: clock.now(),
      publicUrl: config.publicUrl,
      intervalS: config.devicePollIntervalS,
      machineName: body.machine_name,
      ip,
    });
    return c.json(answer, 200);
  });

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/auth/device/token',
    summary: 'Poll for the API key once the code is confirmed (JSON or RFC 8628 form body)',
    request: jsonBody(z.object({ device_code: z.string(), grant_type: z.string().optional() })),
    responses: {
      200: jsonResponse(z.object({ api_key: z.string(), key: z.any(), user: z.any() }), 'The key, minted now'),
      400: jsonResponse(z.object({ error: z.enum(['authorization_pending', 'slow_down', 'expired_token', 'access_denied', 'invalid_grant']), reason: z.string().optional(), message: z.string() }), 'Not (yet) granted'),
    },
  });
  app.post('/auth/device/token', async (c) => {
    const deviceCode = await readTokenRequest(c);
    const { db, clock } = c.var.deps;
    return c.json(await pollDeviceToken(db, deviceCode, clock.now()), 200);
  });

  app.openapi(lookup, async (c) => {
    const { code } = c.req.valid('query');
    const { db, clock } = c.var.deps;
    return c.json(await guarded(c, () => lookupDeviceCode(db, code, callerOf(c).user, clock.now())), 200);
  });

  app.openapi(confirm, async (c) => {
    const { code } = c.req.valid('json');
    const { db, clock } = c.var.deps;
    await guarded(c, () => confirmDeviceCode(db, code, callerOf(c).user, clock.now()));
    return c.json({ ok: true as const }, 200);
  });

  app.openapi(deny, async (c) => {
    const { code } = c.req.valid('json');
    const { db, clock } = c.var.deps;
    await guarded(c, () => denyDeviceCode(db, code, callerOf(c).user, clock.now()));
    return c.json({ ok: true as const }, 200);
  });

  return app;
}
