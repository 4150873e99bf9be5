/** Sandbox training routes (docs/api.md): status, complete, reset, for the signed-in account. */
import { z } from '@hono/zod-openapi';
import { actorOf, callerOf } from '../http/auth.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { completeSandbox, resetSandbox, sandboxStatus, type SandboxStatus } from '../sandbox/sandbox-training.js';

const StatusSchema = z
  .object({
    status: z.enum(['not_started', 'in_progress', 'completed']),
    completed_at: z.string().nullable(),
    next_step: z.string().nullable(),
    datasets: z.array(z.object({ id: z.string(), name: z.string(), latest_version: z.string().nullable(), zarr_status: z.string().nullable() })),
  })
  .openapi('SandboxStatus');

function present(s: SandboxStatus) {
  return { status: s.status, completed_at: s.completed_at ? new Date(s.completed_at).toISOString() : null, next_step: s.next_step, datasets: s.datasets };
}

export const sandboxRoutes: Route[] = [
  route({
    method: 'get',
    path: '/sandbox/status',
    summary: 'Sandbox training status',
    access: 'any',
    responses: { 200: jsonResponse(StatusSchema, 'Status') },
    handler: async (c) => c.json(present(await sandboxStatus(c.var.deps, callerOf(c).user)), 200),
  }),
  route({
    method: 'post',
    path: '/sandbox/complete',
    summary: 'Mark the training complete (needs a sandbox dataset with a version)',
    access: 'any',
    responses: { 200: jsonResponse(StatusSchema, 'Completed'), 409: errorResponses[409] },
    handler: async (c) => c.json(present(await completeSandbox(c.var.deps, callerOf(c).user)), 200),
  }),
  route({
    method: 'post',
    path: '/sandbox/reset',
    summary: "Reset the training: forget the completion and delete the account's sandbox datasets",
    access: 'any',
    responses: { 200: jsonResponse(StatusSchema.extend({ deleted: z.array(z.string()) }), 'Reset') },
    handler: async (c) => {
      const r = await resetSandbox(c.var.deps, actorOf(c));
      return c.json({ ...present(r), deleted: r.deleted }, 200);
    },
  }),
];
