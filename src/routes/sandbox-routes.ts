/** Sandbox training routes (seed §4): status, complete, reset, for the signed-in account. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf } from '../http/auth.js';
import { clientIp } from '../http/client-ip.js';
import { bearerSecurity, errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { completeSandbox, resetSandbox, sandboxStatus, type SandboxStatus } from '../sandbox/sandbox-training.js';

const StatusSchema = z
  .object({
    status: z.enum(['not_started', 'in_progress', 'completed']),
    completed_at: z.string().nullable(),
    next_step: z.string().nullable(),
    datasets: z.array(z.object({ id: z.string(), name: z.string(), latest_version: z.string().nullable(), zarr_status: z.string().nullable() })),
  })
  .openapi('SandboxStatus');

const auth = [authenticate('any')];
const routes = {
  status: createRoute({ method: 'get', path: '/sandbox/status', summary: 'Sandbox training status', security: bearerSecurity, middleware: auth, responses: { 200: jsonResponse(StatusSchema, 'Status'), 401: errorResponses[401] } }),
  complete: createRoute({
    method: 'post',
    path: '/sandbox/complete',
    summary: 'Mark the training complete (needs a sandbox dataset with a version)',
    security: bearerSecurity,
    middleware: auth,
    responses: { 200: jsonResponse(StatusSchema, 'Completed'), 401: errorResponses[401], 409: errorResponses[409] },
  }),
  reset: createRoute({
    method: 'post',
    path: '/sandbox/reset',
    summary: "Reset the training: forget the completion and delete the account's sandbox datasets",
    security: bearerSecurity,
    middleware: auth,
    responses: { 200: jsonResponse(StatusSchema.extend({ deleted: z.array(z.string()) }), 'Reset'), 401: errorResponses[401] },
  }),
};

function present(s: SandboxStatus) {
  return { status: s.status, completed_at: s.completed_at ? new Date(s.completed_at).toISOString() : null, next_step: s.next_step, datasets: s.datasets };
}

export function sandboxRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.openapi(routes.status, async (c) => c.json(present(await sandboxStatus(c.var.deps, callerOf(c).user)), 200));
  app.openapi(routes.complete, async (c) => c.json(present(await completeSandbox(c.var.deps, callerOf(c).user)), 200));
  app.openapi(routes.reset, async (c) => {
    const r = await resetSandbox(c.var.deps, { user: callerOf(c).user, ip: clientIp(c) });
    return c.json({ ...present(r), deleted: r.deleted }, 200);
  });
  return app;
}
