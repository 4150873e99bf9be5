/**
 * The one way to declare an nds route: method, path, who may call it, the schemas of its input and answers,
 * and the handler, in one object. `mountRoutes` mounts the handler behind the access check and the input
 * reading of `request-input.ts`, and documents the same object in `/openapi.json`, so the document cannot
 * drift from what runs. When a page and the API share a path, it decides which answers (`wantsPage`).
 * A documented route refuses a query parameter it does not declare (400, naming it), so that a filter is
 * honoured or refused, never silently ignored; pages, protocols and signed URLs are exempt (`takesAnyQuery`).
 */
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { z, ZodType } from 'zod';
import { NdsError } from '../core/errors.js';
import { checkAccess, refusalsOf, securityOf, type Access } from './access.js';
import { wantsPage } from './accept-preference.js';
import type { AppEnv } from './app-env.js';
import { errorResponses } from './openapi-helpers.js';
import { DEFAULT_BODY_BYTES, DEFAULT_BODY_KEYS, objectKeys, readBody, readParams, readQuery, refuseUnknownQuery, validate, type BodyMedia } from './request-input.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Output<T> = T extends ZodType ? z.output<T> : undefined;

export interface RouteInput<P, Q, B> {
  params: Output<P>;
  query: Output<Q>;
  body: Output<B>;
}

export interface BodySpec<B> {
  schema: B;
  /** Media types taken; JSON unless pages or standard clients post forms here. */
  media?: readonly BodyMedia[];
  /** An absent body is valid (the handler sees `undefined`); otherwise the schema judges `{}`. */
  optional?: boolean;
  /** Most bytes read, while reading: 413 beyond. Default 64 KiB. */
  maxBytes?: number;
  /** Most keys and items of a JSON body, all levels together. Default 2,000. */
  maxKeys?: number;
  /**
   * The schema documented, when the handler validates the fields itself (`schema` is then `FormFields`):
   * routes that answer a form post with a redirect back to its page, errors included.
   */
  documents?: ZodType;
}

export interface RouteSpec<P = undefined, Q = undefined, B = undefined> {
  method: Method | 'all';
  /** Hono's path syntax: `/datasets/:id`, `/datasets/:id{(?:nd|sb)\\d{6}}`, `/objects/*`. */
  path: string;
  summary: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: BodySpec<B>;
  /** The handler reads the body itself (streams: uploads, git); it owns the limit, said here for the docs. */
  rawBody?: string;
  /**
   * The handler judges the raw request target itself (the gateway, which answers in its own shapes and ignores
   * the query): path and query are not read here, so the mounted gateway answers as `nds gateway` does alone.
   */
  rawTarget?: boolean;
  /** A page answers (HTML) where the API answers JSON on the same method and path. */
  page?: boolean;
  /** Kept for old clients: documented as deprecated, and every answer says so and links the successor. */
  deprecated?: { successor: string };
  /** Left out of `/openapi.json`: pages, assets and protocols documented elsewhere (git, the gateway). */
  undocumented?: boolean;
  responses?: RouteConfig['responses'];
  handler: (c: Context<AppEnv>, input: RouteInput<P, Q, B>) => Response | Promise<Response>;
}

// Erased for storage in route lists; `route()` keeps the types where the handler is written.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Route = RouteSpec<any, any, any>;

/** Declares a route; the identity, so that the handler's `input` is typed from the schemas. */
export function route<P extends ZodType | undefined = undefined, Q extends ZodType | undefined = undefined, B extends ZodType | undefined = undefined>(
  spec: RouteSpec<P, Q, B>,
): Route {
  return spec as Route;
}

/**
 * Whether a route takes query parameters it does not declare, and ignores them. Every documented API route
 * refuses them instead (docs/api.md, "Query parameters"). Exempt, each for its reason:
 * - pages (`page` access or a page variant): a person's link may carry a tag a mail client or a reader added;
 *   a page must open anyway;
 * - the mounted gateway (`rawTarget`): it ignores the query by design, as `nds gateway` does alone
 *   (docs/gateway.md);
 * - the other undocumented routes, each a protocol with its own parameters: presigned object URLs
 *   (`/objects/*`: `expires`, `sig`, `size`, `sha256` and those of S3 clients), git's smart HTTP
 *   (`/git/*`: `service=`), git-lfs, and static assets (a cache-busting `?v=`).
 */
export function takesAnyQuery(r: Route): boolean {
  return !!r.page || r.access === 'page' || !!r.rawTarget || !!r.undocumented;
}

/** The query parameters a route declares, for the check of `run`; a schema that is no object is a mistake of the declaration. */
function declaredQuery(r: Route): ReadonlySet<string> {
  if (!r.query) return new Set();
  const keys = objectKeys(r.query as ZodType);
  if (!keys) throw new Error(`${r.method.toUpperCase()} ${r.path}: its query schema must be an object (its keys are the parameters it takes)`);
  return new Set(keys);
}

/** Mounts routes on `app` and documents them; a path with a page and an API variant is one Hono route. */
export function mountRoutes(app: OpenAPIHono<AppEnv>, routes: readonly Route[]): void {
  const groups = new Map<string, Route[]>();
  for (const r of routes) {
    if (!takesAnyQuery(r)) strictQuery.set(r, declaredQuery(r));
    const key = `${r.method} ${r.path}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
    if (!r.undocumented && !r.page && r.method !== 'all') app.openAPIRegistry.registerPath(documentation(r));
  }
  for (const variants of groups.values()) {
    const api = variants.find((v) => !v.page);
    const page = variants.find((v) => v.page);
    if (variants.length > 2 || (variants.length === 2 && (!api || !page))) {
      throw new Error(`${variants[0]!.method.toUpperCase()} ${variants[0]!.path} is declared twice`);
    }
    const { method, path } = variants[0]!;
    const handler = async (c: Context<AppEnv>) => {
      const chosen = page && api ? (wantsPage(c.req.header('accept'), c.req.header('authorization') !== undefined) ? page : api) : (api ?? page)!;
      return run(c, chosen);
    };
    if (method === 'all') app.all(path, handler);
    else app.on(method.toUpperCase(), path, handler);
  }
}

/** When the deprecated routes were deprecated (2026-11-23T00:00:00Z), as RFC 9745's `@<unix seconds>`. */
export const DEPRECATED_SINCE = '@1795392000';

/** The parameters each strict route takes (see `takesAnyQuery`), found once when it is mounted. */
const strictQuery = new WeakMap<Route, ReadonlySet<string>>();

async function run(c: Context<AppEnv>, r: Route): Promise<Response> {
  // First, so that refusals carry them too: RFC 9745 `Deprecation` and RFC 8288 `Link` to the successor.
  if (r.deprecated) {
    c.header('Deprecation', DEPRECATED_SINCE);
    c.header('Link', `<${c.var.deps.config.publicUrl}${r.deprecated.successor}>; rel="successor-version"`);
  }
  const query = r.rawTarget ? {} : readQuery(c);
  // Before the access check: the parameters a route takes are public (`/openapi.json`), and the answer is the
  // same for every caller and every id, known or not.
  const allowed = strictQuery.get(r);
  if (allowed) refuseUnknownQuery(query, allowed);
  await checkAccess(c, r.access);
  const params = r.rawTarget ? {} : readParams(c);
  const input: RouteInput<unknown, unknown, unknown> = {
    params: r.params ? validate(r.params, params, 'params') : undefined,
    query: r.query ? validate(r.query, query, 'query') : undefined,
    body: undefined,
  };
  if (r.body) {
    const raw = await readBody(c, r.body.media ?? ['json'], { maxBytes: r.body.maxBytes ?? DEFAULT_BODY_BYTES, maxKeys: r.body.maxKeys ?? DEFAULT_BODY_KEYS });
    if (raw !== undefined || !r.body.optional) input.body = validate(r.body.schema, raw ?? {}, 'body');
  } else if (!r.rawBody && hasBody(c)) {
    throw new NdsError('unsupported_media_type', { message: 'This route takes no request body.' });
  }
  return r.handler(c, input as RouteInput<never, never, never>);
}

function hasBody(c: Context): boolean {
  const length = c.req.header('content-length');
  return (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
}

/** `/datasets/:id{(?:nd|sb)\\d{6}}` → `/datasets/{id}`; a trailing `*` → `{path}`. */
export function documentedPath(path: string): string {
  return path.replace(/:([A-Za-z_]\w*)(\{(?:[^{}]|\{[^{}]*\})*\})?/g, '{$1}').replace(/\/\*$/, '/{path}');
}

function documentation(r: Route): RouteConfig {
  const refusals = Object.fromEntries(refusalsOf(r.access).map((s) => [s, errorResponses[s as keyof typeof errorResponses]]));
  const body = r.body;
  const content = body
    ? Object.fromEntries((body.media ?? ['json']).map((m) => [m === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', { schema: (body.documents ?? body.schema) as ZodType }]))
    : undefined;
  return {
    method: r.method as Method,
    path: documentedPath(r.path),
    summary: r.summary,
    ...(r.deprecated && { deprecated: true }),
    ...(securityOf(r.access) && { security: securityOf(r.access) }),
    request: {
      ...(r.params && { params: r.params }),
      ...(r.query && { query: r.query }),
      ...(body && { body: { content, required: !body.optional } }),
    },
    responses: { ...refusals, ...(r.body || r.params || r.query ? { 400: errorResponses[400] } : {}), ...(r.responses ?? { 200: { description: 'OK' } }) },
  } as RouteConfig;
}

/** One line a route: method, path, access, and `page` for a page variant; the snapshot test holds the list. */
export function routeTable(routes: readonly Route[]): string[] {
  return routes.map((r) => `${r.method.toUpperCase().padEnd(6)} ${r.path}  ${r.access}${r.page ? '  (page)' : ''}${r.undocumented ? '  (undocumented)' : ''}`);
}
