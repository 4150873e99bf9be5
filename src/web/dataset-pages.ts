import { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.js';

export function datasetPages(): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
