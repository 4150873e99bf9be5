/**
 * Reading a route's input in one place: path parameters, query and body, each checked before any service
 * sees it. Strings with NUL characters or unpaired surrogates are refused (PostgreSQL cannot store the
 * first, and neither is text a person typed); bodies are read against a byte limit while they arrive, so a
 * client sending more than the limit costs the server nothing more; JSON is bounded in depth and keys.
 */
import type { Context } from 'hono';
import type { ZodType } from 'zod';
import { NdsError } from '../core/errors.js';

/** Default body limit of a JSON route. */
export const DEFAULT_BODY_BYTES = 64 * 1024;
/** Longest path parameter: ids, usernames and key ids are far shorter. */
export const MAX_PARAM_CHARS = 256;
const MAX_QUERY_CHARS = 4096;
const MAX_JSON_DEPTH = 32;
/** Default bound of keys and items in a JSON body, all levels together. */
export const DEFAULT_BODY_KEYS = 2_000;

export type BodyMedia = 'json' | 'form';

/** The first problem of a string a person could not have meant: a NUL, or half of a surrogate pair. */
export function textProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit === 0) return 'contains a NUL character';
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return 'contains an unpaired surrogate';
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return 'contains an unpaired surrogate';
  }
  return undefined;
}

/**
 * Walks a parsed JSON value without recursion: every string (keys too) must be text, the nesting at most
 * `MAX_JSON_DEPTH` deep and its keys and items at most `maxKeys` in all.
 */
export function jsonProblems(value: unknown, maxKeys = DEFAULT_BODY_KEYS): string[] {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: 'body', depth: 0 }];
  let keys = 0;
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return [`${path}: ${problem}`];
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_JSON_DEPTH) return [`${path}: nested deeper than ${MAX_JSON_DEPTH} levels`];
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      keys += entries.length;
      if (keys > maxKeys) return [`body: more than ${maxKeys} keys and items`];
      for (const [k, x] of entries) {
        const problem = Array.isArray(v) ? undefined : textProblem(k);
        if (problem) return [`${path}: a key ${problem}`];
        stack.push({ value: x, path: path === 'body' ? k : `${path}.${k}`, depth: depth + 1 });
      }
    }
  }
  return [];
}

/** Path parameters, each decoded, bounded and clean. */
export function readParams(c: Context): Record<string, string> {
  const params = c.req.param() as Record<string, string>;
  for (const [name, value] of Object.entries(params)) {
    if (value.length > MAX_PARAM_CHARS) throw new NdsError('validation_failed', { details: [`${name}: longer than ${MAX_PARAM_CHARS} characters`] });
    const problem = textProblem(value);
    if (problem) throw new NdsError('validation_failed', { details: [`${name}: ${problem}`] });
  }
  return params;
}

/** Query parameters: one value as a string, a repeated one as an array; bounded and clean. */
export function readQuery(c: Context): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let chars = 0;
  for (const [name, values] of Object.entries(c.req.queries())) {
    for (const value of [name, ...values]) {
      chars += value.length;
      const problem = textProblem(value);
      if (problem) throw new NdsError('validation_failed', { details: [`${name}: ${problem}`] });
    }
    out[name] = values.length === 1 ? values[0]! : values;
  }
  if (chars > MAX_QUERY_CHARS) throw new NdsError('validation_failed', { details: [`query: longer than ${MAX_QUERY_CHARS} characters`] });
  return out;
}

/**
 * Refuses a query parameter the route does not declare: a filter a route does not know must not be silently
 * ignored (`?rate=512` once returned everything). The answer names the parameter and what the route takes.
 */
export function refuseUnknownQuery(query: Record<string, unknown>, allowed: ReadonlySet<string>): void {
  const unknown = Object.keys(query).filter((name) => !allowed.has(name));
  if (unknown.length === 0) return;
  const takes = allowed.size ? `it takes ${[...allowed].join(', ')}` : 'it takes no query parameters';
  throw new NdsError('validation_failed', {
    message: `Unknown query parameter${unknown.length === 1 ? '' : 's'} ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')}: ${takes}.`,
    details: unknown.map((name) => `${name.slice(0, 100)}: not a parameter of this route (${takes})`),
  });
}

/** The keys of an object schema (through `.optional()`, `.default()`, pipes and transforms); `undefined` for any other schema. */
export function objectKeys(schema: ZodType): string[] | undefined {
  let current: unknown = schema;
  for (let depth = 0; depth < 10; depth++) {
    const def = (current as { _zod?: { def?: { type?: string; shape?: Record<string, unknown>; in?: unknown; innerType?: unknown } } })._zod?.def;
    if (!def) return undefined;
    if (def.type === 'object' && def.shape) return Object.keys(def.shape);
    current = def.type === 'pipe' ? def.in : def.innerType;
    if (current === undefined) return undefined;
  }
  return undefined;
}

/** The media type of the request body, among those a route takes; `undefined` when there is no body. */
export function bodyMedia(c: Context, accepted: readonly BodyMedia[]): BodyMedia | undefined {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const length = c.req.header('content-length');
  const hasBody = type !== '' || (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
  if (!hasBody) return undefined;
  const media: BodyMedia | undefined = /^application\/([\w.-]+\+)?json$/.test(type) ? 'json' : type === 'application/x-www-form-urlencoded' ? 'form' : undefined;
  if (!media || !accepted.includes(media)) {
    const names = accepted.map((m) => (m === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')).join(' or ');
    throw new NdsError('unsupported_media_type', { message: `Send the body as ${names}.`, details: [`content-type: ${type || '(none)'}`] });
  }
  return media;
}

/**
 * The body's bytes, refused with 413 as soon as they pass `maxBytes`: a declared length over the limit
 * is refused before a byte is read, and a longer stream is cut off (the connection is closed after the answer).
 */
export async function readBodyBytes(c: Context, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => {
    c.header('Connection', 'close');
    return new NdsError('payload_too_large', { message: `The request body is larger than this route takes (${maxBytes} bytes).`, extra: { limit_bytes: maxBytes } });
  };
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (declared > maxBytes) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    parts.push(value);
  }
  return Buffer.concat(parts, total);
}

/** Parses and checks a body of a declared media type; `undefined` when the request has none. */
export async function readBody(c: Context, accepted: readonly BodyMedia[], limits: { maxBytes: number; maxKeys: number }): Promise<unknown> {
  const { maxBytes, maxKeys } = limits;
  const media = bodyMedia(c, accepted);
  if (media === undefined) return undefined;
  const bytes = await readBodyBytes(c, maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new NdsError('validation_failed', { details: ['body: not UTF-8 text'] });
  }
  let value: unknown;
  if (media === 'json') {
    if (text.trim() === '') return undefined;
    try {
      value = JSON.parse(text);
    } catch {
      throw new NdsError('validation_failed', { details: ['body: not JSON'] });
    }
  } else {
    const form: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(text)) {
      const had = form[k];
      form[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
    value = form;
  }
  const problems = jsonProblems(value, maxKeys);
  if (problems.length > 0) throw new NdsError('validation_failed', { details: problems });
  return value;
}

/** Validates with a schema; every problem becomes one `details` line, `path: message`. */
export function validate<T>(schema: ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const details = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : where}: ${i.message}`);
    throw new NdsError('validation_failed', { details });
  }
  return result.data;
}
