import { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.js';

export function assetRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
