import { z } from '@hono/zod-openapi';

/** The general error body (docs/api.md), for OpenAPI responses. */
export const ErrorBody = z
  .object({ error: z.string(), message: z.string(), details: z.array(z.string()).optional(), reason: z.string().optional() })
  .openapi('Error');

export function jsonResponse<T extends z.ZodTypeAny>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

export const errorResponses = {
  400: jsonResponse(ErrorBody, 'Bad request'),
  401: jsonResponse(ErrorBody, 'Missing or invalid credentials'),
  403: jsonResponse(ErrorBody, 'Forbidden'),
  404: jsonResponse(ErrorBody, 'Not found'),
  409: jsonResponse(ErrorBody, 'Conflict'),
} as const;

