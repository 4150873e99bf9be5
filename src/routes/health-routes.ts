/**
 * Health of a process, for monitors and load balancers. `/healthz` (liveness) answers 200 while the process
 * lives, and says whether the database answers; `/readyz` (readiness) answers 503 while it does not, so a
 * load balancer sends requests elsewhere until it does.
 */
import { z } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { DATABASE_RETRY_AFTER_S } from '../db/connection-loss.js';
import { databaseAnswers } from '../db/database-health.js';
import type { Database } from '../db/types.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';

export interface Health {
  /** The process answers (always true in an answer). */
  ok: true;
  database: 'up' | 'down';
}

const HealthSchema = z.object({ ok: z.literal(true), database: z.enum(['up', 'down']) }).openapi('Health');
const ReadySchema = z.object({ ready: z.boolean(), database: z.enum(['up', 'down']) }).openapi('Readiness');

export async function healthOf(db: Kysely<Database>): Promise<Health> {
  return { ok: true, database: (await databaseAnswers(db)) ? 'up' : 'down' };
}

/** The status, body and headers of `/readyz`, for the API's routes and the standalone gateway alike. */
export async function readinessOf(db: Kysely<Database>): Promise<{ status: 200 | 503; body: { ready: boolean; database: 'up' | 'down' }; headers: Record<string, string> }> {
  const { database } = await healthOf(db);
  return database === 'up'
    ? { status: 200, body: { ready: true, database }, headers: {} }
    : { status: 503, body: { ready: false, database }, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) } };
}

export const healthRoutes: Route[] = [
  route({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process answers (200 while it lives), and whether the database does',
    access: 'none',
    responses: { 200: jsonResponse(HealthSchema, 'The process lives') },
    handler: async (c) => c.json(await healthOf(c.var.deps.db), 200),
  }),
  route({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: 200 when the database answers, 503 (Retry-After) when it does not',
    access: 'none',
    responses: { 200: jsonResponse(ReadySchema, 'Ready'), 503: jsonResponse(ReadySchema, 'Not ready: the database does not answer') },
    handler: async (c) => {
      const { status, body, headers } = await readinessOf(c.var.deps.db);
      return c.json(body, status, headers);
    },
  }),
];
