/**
 * Fuzzing the real server: every operation of `/openapi.json`, the gateway (`/zarrproxy/...`), the object
 * routes of the folder store (`/objects/...`) and the git routes (`/git/<id>.git/...`), with malformed bodies (bad JSON, wrong types, NUL and unpaired surrogates,
 * deep nesting, huge strings, many keys), bad path and query parameters (`..`, `%2e%2e`, `%00`, long ids,
 * repeated parameters), anonymously, with a member's key, an admin's key and broken credentials.
 *
 * Promised: no answer is a 5xx, every answer comes within 5 s, API errors are JSON `{error, message}`, and the
 * server is healthy afterwards. The cases come from a seeded generator: the seed is printed, and
 * `FUZZ_SEED=<seed>` repeats a run; `FUZZ_CASES=<n>` changes the number of cases an operation gets.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, STORE } from '../gateway/support.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES ?? 24);
const ANSWER_WITHIN_MS = 5000;
const CONCURRENCY = 4;

/** mulberry32: small, fast and good enough to pick cases; the same seed gives the same run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)]!;
    },
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof prng>;

interface FuzzRequest {
  method: string;
  /** Sent byte for byte (a URL parser would resolve `..` and `%2e%2e`). */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /**
   * How errors are answered: `api`, JSON `{error, message}` (the API and the gateway); `cdn`, the CDN's JSON
   * shape `{success: false, errors}` (the gateway's purge endpoint); `own`, a protocol's own (git).
   */
  errors: 'api' | 'cdn' | 'own';
  /** What the case was, for the report. */
  label: string;
}

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
/**
 * Sockets given a quiet error listener: a server that answers a large body early (413) closes the connection,
 * and the client's later writes fail (EPIPE) on a socket Node's client no longer reports on the request.
 */
const quieted = new WeakSet<object>();

function send(base: URL, r: FuzzRequest): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...r.headers };
    if (r.body !== undefined) headers['content-length'] = String(r.body.length);
    const req = request({ host: base.hostname, port: base.port, method: r.method, path: r.target, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks), ms: performance.now() - started });
      });
      res.on('error', reject);
    });
    req.on('socket', (socket) => {
      if (quieted.has(socket)) return;
      quieted.add(socket);
      socket.on('error', () => {});
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
    // The server may answer (413) and close before the body is sent: that is an answer, not a failure.
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(r.body);
  });
}

// ---- values --------------------------------------------------------------------------------------------

/** Path segments no id is: traversal in its encodings, NUL, bad UTF-8 and percent-encoding, long and odd ids. */
const BAD_SEGMENTS = [
  '..', '%2e%2e', '%2E%2e', '.%2e', '%2e', '..%2f..%2fetc%2fpasswd', '%2e%2e%5c%2e%2e', '%00', 'a%00b', '%ED%A0%80', '%ED%B0%80', '%C0%AF', '%FF%FE',
  '%zz', '%', '%2', '%2F', 'a%2Fb', '%5C', '%2500', 'a%2500b', '%25ED%25A0%2580', '%25zz', '%252e%252e', `nd${'9'.repeat(400)}`, 'x'.repeat(257), 'x'.repeat(3000), '-1', '0', '1e309', 'NaN', '99999999999999999999999',
  '9007199254740993', 'nd000000', 'nd1', 'ND000001', 'sb000000', 'null', 'undefined', "'%20or%201=1--", '%22%3E%3Cscript%3E', '%F0%9F%98%80', '%E2%80%AE', '~', '*', 'me',
];

const BAD_QUERY_VALUES = [
  '', '-1', '0', '1.5', '1e309', 'NaN', 'Infinity', 'true', '[]', '{}', 'abc', '%00', 'a%00', '%ED%A0%80', '%zz', '%', 'x'.repeat(5000), '9'.repeat(400), '%2e%2e%2f',
  '2026-13-45', 'null', '%22', '%27', '*', '%F0%9F%98%80',
];

function badString(rng: Rng): string {
  return rng.pick([
    '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\ud83d', 'x'.repeat(300), 'x'.repeat(70_000), '../../etc/passwd', '%00', '\u202e', '😀'.repeat(100), 'null', '-1', 'nd000000',
    '<script>alert(1)</script>', "' or 1=1 --", '\r\nX-Injected: 1', 'a@b', '@@@', 'é'.repeat(300),
  ]);
}

function wrongValue(rng: Rng, depth = 0): unknown {
  switch (rng.int(depth > 2 ? 7 : 10)) {
    case 0: return null;
    case 1: return rng.pick([true, false]);
    case 2: return rng.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER]);
    case 3: case 4: case 5: return badString(rng);
    case 6: return {};
    case 7: return [wrongValue(rng, depth + 1), wrongValue(rng, depth + 1)];
    case 8: return { [badString(rng)]: wrongValue(rng, depth + 1) };
    default: return Array.from({ length: 3 }, () => wrongValue(rng, depth + 1));
  }
}

type JsonSchema = { $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; enum?: unknown[]; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; default?: unknown; minLength?: number; format?: string; pattern?: string };

/** A value a schema takes, roughly: the fuzz then breaks one part of it, so that checks past the first one run. */
function plausible(rng: Rng, schema: JsonSchema | undefined, resolve: (s: JsonSchema) => JsonSchema, depth = 0): unknown {
  if (!schema || depth > 6) return 'x';
  const s = resolve(schema);
  if (s.enum) return rng.pick(s.enum);
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return plausible(rng, rng.pick(variants), resolve, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = plausible(rng, v, resolve, depth + 1);
      return out;
    }
    case 'array': return [plausible(rng, s.items, resolve, depth + 1)];
    case 'integer': return rng.pick([1, 2, 10]);
    case 'number': return rng.pick([1, 250.5]);
    case 'boolean': return rng.pick([true, false]);
    default:
      if (s.format === 'email') return `fuzz${rng.int(1000)}@example.org`;
      if (s.pattern?.includes('a-f0-9') || s.pattern?.includes('0-9a-f')) return 'a'.repeat(64);
      return rng.pick(['fuzz', 'v1.0.0', '1.0.0', 'README', 'nd000001', 'fuzz-name', 'CC0-1.0']);
  }
}

/** Replaces one field (at any depth) of a plausible value by a wrong one. */
function breakOneField(rng: Rng, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return wrongValue(rng);
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || rng.chance(0.15)) {
    (copy as Record<string, unknown>)[rng.pick(['extra', '__proto__', 'constructor', badString(rng).slice(0, 50) || 'k'])] = wrongValue(rng);
    return copy;
  }
  const k = rng.pick(keys);
  const inner = (copy as Record<string, unknown>)[k];
  (copy as Record<string, unknown>)[k] = inner !== null && typeof inner === 'object' && rng.chance(0.5) ? breakOneField(rng, inner) : wrongValue(rng);
  if (rng.chance(0.2)) delete (copy as Record<string, unknown>)[rng.pick(keys)];
  return copy;
}

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

/** A body: mostly JSON with one field broken, else a malformed body of another kind. */
function fuzzBody(rng: Rng, schema: JsonSchema | undefined, resolve: (s: JsonSchema) => JsonSchema, media: string[]): { body: Buffer; contentType: string } {
  const json = 'application/json';
  const kind = rng.int(20);
  const text = (t: string, contentType = json) => ({ body: Buffer.from(t), contentType });
  switch (kind) {
    case 0: return text(rng.pick(['{', '{"a":', 'nul', '{"a":1,}', "{'a':1}", '\u0000', '[1,2', '"\\u12"', '{"a":"\\ud800"}', '{"a":"\\udfff\\ud800"}', '1e99999', '{"__proto__":{"admin":true}}']));
    case 1: return text(nested(rng.pick([33, 40, 1000, 100_000])));
    case 2: return text(`{"a":${'{"a":'.repeat(60)}1${'}'.repeat(60)}}`);
    case 3: return text(JSON.stringify(Object.fromEntries(Array.from({ length: rng.pick([2001, 5000]) }, (_, i) => [`k${i}`, i]))));
    case 4: return text(JSON.stringify({ big: 'x'.repeat(rng.pick([65_000, 70_000, 2_000_000])) }));
    case 5: return { body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]), contentType: json };
    case 6: return text(JSON.stringify(plausible(rng, schema, resolve)), rng.pick(['text/plain', 'multipart/form-data; boundary=x', 'application/xml', '', 'application/json; charset=latin1', 'application/vnd.api+json', 'application/x-www-form-urlencoded']));
    case 7: return text(rng.pick(['null', '[]', '0', '"x"', 'true', '', '   ', '{}']));
    case 8: {
      const pairs = new URLSearchParams();
      for (const k of Object.keys(resolve(schema ?? {}).properties ?? { a: {} })) {
        pairs.append(k, badString(rng).slice(0, 2000));
        if (rng.chance(0.3)) pairs.append(k, 'again');
      }
      return { body: Buffer.from(pairs.toString() + (rng.chance(0.3) ? '&%zz=%E0&a=%00' : '')), contentType: media.includes('form') ? 'application/x-www-form-urlencoded' : rng.pick(['application/x-www-form-urlencoded', json]) };
    }
    default: return text(JSON.stringify(breakOneField(rng, plausible(rng, schema, resolve))));
  }
}

// ---- the test ------------------------------------------------------------------------------------------

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: Array<{ name: string; schema: JsonSchema }>;
  body?: { schema: JsonSchema; media: string[] };
}

function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params: Array<{ in: string; name: string; schema: JsonSchema }> = op.parameters ?? [];
      const content = op.requestBody?.content as Record<string, { schema: JsonSchema }> | undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        body: content && {
          schema: Object.values(content)[0]!.schema,
          media: Object.keys(content).map((m) => (m === 'application/json' ? 'json' : 'form')),
        },
      });
    }
  }
  return ops;
}

describe('HTTP fuzz: no 5xx, answers within 5 s, JSON errors', { timeout: 180_000 }, () => {
  let server: TestServer;
  let admin: TestAccount;
  let member: TestAccount;
  let victim: TestAccount;
  let gatewayId: string;
  let apiDatasetId: string;
  let gitId: string;
  const failures: string[] = [];
  let sent = 0;
  let slowest = 0;

  // An error nothing listens for (a stream's, a child process's) would end a real server: it fails the run.
  const uncaught = (err: Error) => failures.push(`uncaught: ${err.stack ?? err.message}`);

  before(async () => {
    process.on('uncaughtException', uncaught);
    console.log(`# fuzz seed ${SEED} (FUZZ_SEED=${SEED} repeats this run)`);
    server = await startTestServer({ env: { EDGE_API_TOKEN: 'edge-token-for-fuzz-0123456789', EDGE_ZONE_ID: 'zone1', SERVICE_WEBHOOK_TOKEN: 'webhook-token-for-fuzz-0123456789', GITHUB_WEBHOOK_SECRET: 'github-secret-for-fuzz' } });
    admin = await createAccount(server, { role: 'admin' });
    member = await createAccount(server);
    victim = await createAccount(server);
    gatewayId = newDatasetId();
    await insertDataset(server.deps.db, gatewayId);
    await putZarrCopy(server.deps.objects, gatewayId);
    apiDatasetId = newDatasetId();
    await insertDataset(server.deps.db, apiDatasetId);
    // A hosted repository (empty, bare) owned by the member: git's own protocol gets the bad input.
    gitId = newDatasetId();
    await server.deps.db.insertInto('datasets').values({ id: gitId, name: 'Fuzz git', owner_id: member.user.id, visibility: 'public', source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null }).execute();
    const dir = repositoryDir(server.config.gitDir, gitId);
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', dir]);
  });
  after(async () => {
    process.off('uncaughtException', uncaught);
    agent.destroy();
    await server.close();
  });

  /** The credentials a case is sent with. */
  function authHeaders(rng: Rng): Record<string, string> {
    switch (rng.int(8)) {
      case 0: case 1: return {};
      case 2: case 3: return { authorization: `Bearer ${admin.key}` };
      case 4: case 5: return { authorization: `Bearer ${member.key}` };
      case 6: return { authorization: rng.pick(['Bearer nds_not-a-real-key', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer nds_' + 'x'.repeat(5000), 'Token abc', 'Basic %%%']) };
      default: return { cookie: rng.pick(['nds_session=forged', 'nds_session=' + 'x'.repeat(4000), 'nds_session=%00']), origin: server.url };
    }
  }

  async function runAll(requests: FuzzRequest[]): Promise<void> {
    const base = new URL(server.url);
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        sent++;
        let answer: Answer;
        try {
          answer = await send(base, r);
        } catch (err) {
          // The server may refuse a huge body (413) and close while it is still being sent.
          if ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET') continue;
          failures.push(`${r.label}: ${(err as Error).message}`);
          continue;
        }
        slowest = Math.max(slowest, answer.ms);
        const what = `${r.method} ${r.target.slice(0, 160)} [${r.label}]`;
        // 431: the request line and headers passed Node's 16 KiB bound, refused before any route (no body).
        if (answer.status === 431 && answer.body.length === 0) continue;
        if (answer.status >= 500) failures.push(`${what} → ${answer.status} ${answer.body.toString().slice(0, 300)}`);
        else if (answer.ms > ANSWER_WITHIN_MS) failures.push(`${what} → answered in ${answer.ms.toFixed(0)} ms`);
        // A client that names HTML without a key is a browser: where a page shares the path, the page answers.
        else if (r.headers.accept?.includes('text/html') && !r.headers.authorization && answer.contentType.startsWith('text/html')) continue;
        else if (r.errors !== 'own' && answer.status >= 400 && r.method !== 'HEAD') {
          let parsed: { error?: unknown; message?: unknown; success?: unknown; errors?: unknown } | undefined;
          try {
            parsed = JSON.parse(answer.body.toString());
          } catch {
            parsed = undefined;
          }
          const shaped = r.errors === 'api' ? typeof parsed?.error === 'string' && typeof parsed.message === 'string' : parsed?.success === false && Array.isArray(parsed.errors);
          if (!answer.contentType.startsWith('application/json') || !shaped) {
            failures.push(`${what} → ${answer.status} not a JSON error: ${answer.contentType} ${answer.body.toString().slice(0, 200)}`);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  it('fuzzes every documented operation', async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const schemas = (doc.components?.schemas ?? {}) as Record<string, JsonSchema>;
    const resolve = (s: JsonSchema): JsonSchema => (s.$ref ? resolve(schemas[s.$ref.split('/').pop()!] ?? {}) : s);
    const operations = operationsOf(doc);
    assert.ok(operations.length >= 50, `only ${operations.length} operations documented`);
    const rng = prng(SEED);
    const requests: FuzzRequest[] = [];
    const validSegments = (name: string) =>
      name === 'username' ? [victim.user.username, 'nobody-here'] : name === 'sourceId' ? ['ds000001', 'x'] : name === 'id' ? [apiDatasetId, '123456', '999999'] : ['x'];
    for (const op of operations) {
      for (let i = 0; i < CASES_PER_OPERATION; i++) {
        const auth = authHeaders(rng);
        // The fuzzing accounts keep their keys (so `current` is no bad segment either: `/auth/keys/current`).
        if (op.method === 'DELETE' && op.path === '/auth/keys/current' && auth.authorization?.includes(admin.key.slice(0, 20))) continue;
        if (op.method === 'DELETE' && op.path === '/auth/keys/current' && auth.authorization?.includes(member.key.slice(0, 20))) continue;
        const breakPath = op.pathParams.length > 0 && rng.chance(0.5);
        let target = op.path.replace(/\{(\w+)\}/g, (_, name: string) => (breakPath && rng.chance(0.7) ? rng.pick(BAD_SEGMENTS) : rng.pick(validSegments(name))));
        const query: string[] = [];
        if (rng.chance(0.6)) {
          for (const q of op.query) {
            if (rng.chance(0.5)) continue;
            const good = plausible(rng, q.schema, resolve);
            const value = rng.chance(0.6) ? rng.pick(BAD_QUERY_VALUES) : encodeURIComponent(String(good));
            query.push(`${q.name}=${value}`);
            if (rng.chance(0.25)) query.push(`${q.name}=${rng.pick(BAD_QUERY_VALUES)}`);
          }
          if (rng.chance(0.3)) query.push(rng.pick(['unknown=1', '%00=1', 'a[b]=1', '__proto__=x', '=', '&&', `long=${'q'.repeat(5000)}`, '%ED%A0%80=1', 'x=%zz']));
        }
        if (query.length > 0) target += `?${query.join('&')}`;
        const headers: Record<string, string> = { accept: rng.pick(['application/json', '*/*', 'application/json, text/html;q=0.1']), ...auth };
        let body: Buffer | undefined;
        if (op.body || rng.chance(0.1)) {
          const made = fuzzBody(rng, op.body?.schema, resolve, op.body?.media ?? ['json']);
          body = made.body;
          if (made.contentType) headers['content-type'] = made.contentType;
        }
        // Pages share some paths: a browser's Accept gets the page, which is not the API's JSON.
        requests.push({ method: op.method, target, headers, body, errors: 'api', label: `${op.method} ${op.path} #${i}` });
      }
    }
    await runAll(requests);
    console.log(`# ${requests.length} API requests, slowest answer ${slowest.toFixed(0)} ms`);
  });

  it('fuzzes the gateway', async () => {
    const rng = prng(SEED + 1);
    const requests: FuzzRequest[] = [];
    const chunk = `${STORE}/eeg_250hz/0/c/0/0`;
    for (let i = 0; i < 12 * CASES_PER_OPERATION; i++) {
      const segments = [gatewayId, 'zarr', ...chunk.split('/')];
      const mutation = rng.int(6);
      if (mutation === 0) segments[rng.int(segments.length)] = rng.pick(BAD_SEGMENTS);
      else if (mutation === 1) segments.splice(rng.int(segments.length + 1), 0, rng.pick(BAD_SEGMENTS));
      else if (mutation === 2) segments.push(...Array.from({ length: rng.pick([3, 30, 300]) }, () => rng.pick(['a', 'b'.repeat(40), '..', '%2e%2e'])));
      else if (mutation === 3) segments.splice(2, segments.length, rng.pick(['index.json', 'index.json/x', 'zarr.json', STORE, `${STORE}/zarr.json`, '']));
      let target = `/zarrproxy/${segments.join('/')}`;
      if (rng.chance(0.1)) target = rng.pick(['/zarrproxy', '/zarrproxy/', '/zarrproxy//', '/zarrproxy/%2e%2e/%2e%2e/etc/passwd', '/zarrproxy/edge/zones/%zz/purge_cache', '/zarrproxy/edge/zones/zone1/purge_cache', '/zarrproxy/edge/zones/x/purge_cache']);
      if (rng.chance(0.2)) target += `?${rng.pick(BAD_QUERY_VALUES)}=${rng.pick(BAD_QUERY_VALUES)}`;
      const method = rng.pick(['GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH']);
      const headers: Record<string, string> = {};
      if (rng.chance(0.5)) headers.range = rng.pick(['bytes=0-0', 'bytes=5-1', 'bytes=-0', 'bytes=abc', 'bytes=0-1,2-3', 'bytes=99999999999999999999-', 'bytes=-99999999999999999999', 'items=0-1', 'bytes=', 'bytes=1000-', 'bytes=999-999']);
      if (rng.chance(0.2)) headers['if-none-match'] = rng.pick(['*', '"x"', 'W/"x"', ',,,', 'x'.repeat(3000)]);
      if (rng.chance(0.2)) headers['if-range'] = rng.pick(['"x"', 'Tue, 24 Nov 2026 00:00:00 GMT', '']);
      if (rng.chance(0.3)) headers.origin = rng.pick(['http://localhost:5173', 'null', 'https://evil.example', 'x'.repeat(2000)]);
      if (rng.chance(0.2)) headers.authorization = rng.pick(['Bearer edge-token-for-fuzz-0123456789', 'Bearer wrong', `Bearer ${admin.key}`]);
      let body: Buffer | undefined;
      if (method === 'POST' || method === 'PUT') {
        const made = fuzzBody(rng, undefined, (s) => s, ['json']);
        body = made.body;
        headers['content-type'] = made.contentType || 'application/json';
        if (rng.chance(0.3)) body = Buffer.from(rng.pick(['{"files":["http://x/y"]}', '{"prefixes":["%zz"]}', '{"purge_everything":true}', '{"files":[{"url":null}]}', `{"prefixes":["${'a'.repeat(5000)}"]}`]));
      }
      requests.push({ method, target, headers, body, errors: target.startsWith('/zarrproxy/edge/') && method === 'POST' ? 'cdn' : 'api', label: `gateway #${i}` });
    }
    const before = sent;
    await runAll(requests);
    console.log(`# ${sent - before} gateway requests`);
  });

  it('fuzzes the object routes of the folder store', async () => {
    const rng = prng(SEED + 3);
    const requests: FuzzRequest[] = [];
    for (let i = 0; i < 3 * CASES_PER_OPERATION; i++) {
      const segments = rng.pick([[gatewayId, 'zarr', 'index.json'], [gatewayId, 'objects', 'a'.repeat(64)], [apiDatasetId, 'objects', 'x']]);
      const at = rng.int(segments.length + 1);
      const path = [...segments.slice(0, at), ...(rng.chance(0.8) ? [rng.pick(BAD_SEGMENTS)] : []), ...segments.slice(at)].join('/');
      const query = rng.pick(['', `?expires=${rng.pick(BAD_QUERY_VALUES)}&sig=${rng.pick(BAD_QUERY_VALUES)}`, '?expires=99999999999&sig=abc&size=-1', `?size=${'9'.repeat(40)}&sha256=zz&expires=1&sig=x`]);
      const method = rng.pick(['GET', 'GET', 'HEAD', 'PUT', 'DELETE', 'POST']);
      const headers: Record<string, string> = {};
      if (rng.chance(0.4)) headers.authorization = rng.pick(['Bearer ndso_forged', 'Bearer ndso_' + 'x'.repeat(3000), `Bearer ${member.key}`, 'Bearer ndso_a.b.c']);
      if (rng.chance(0.3)) headers.range = rng.pick(['bytes=0-0', 'bytes=5-1', 'bytes=abc', 'bytes=-99999999999999999999']);
      let body: Buffer | undefined;
      if (method === 'PUT' || method === 'POST') {
        body = Buffer.from(rng.pick(['x', '', 'y'.repeat(70_000)]));
        headers['content-type'] = 'application/octet-stream';
        if (rng.chance(0.3)) headers['x-nds-sha256'] = rng.pick(['zz', 'a'.repeat(64), '%00']);
      }
      requests.push({ method, target: `/objects/${path}${query}`, headers, body, errors: 'api', label: `objects #${i}` });
    }
    const before = sent;
    await runAll(requests);
    console.log(`# ${sent - before} object requests`);
  });

  it('fuzzes the git routes', async () => {
    const rng = prng(SEED + 2);
    const requests: FuzzRequest[] = [];
    const basic = (key: string) => `Basic ${Buffer.from(`nds:${key}`).toString('base64')}`;
    for (let i = 0; i < 4 * CASES_PER_OPERATION; i++) {
      const repo = rng.chance(0.7) ? `${gitId}.git` : rng.pick([`${rng.pick(BAD_SEGMENTS)}.git`, 'nd000000.git', gitId, `${gitId}.git%00`, '..', '%2e%2e']);
      const rest = rng.pick(['/info/refs?service=git-upload-pack', '/info/refs?service=git-receive-pack', '/info/refs', '/git-upload-pack', '/git-receive-pack', '/HEAD', '/objects/info/packs', '/../../../etc/passwd', '/%2e%2e/%2e%2e/config', '/objects/%00', '/info/refs?service=%00', '/info/refs?service=git-upload-pack&service=git-receive-pack', `/${'x'.repeat(300)}`, '', '/config']);
      const method = rest.startsWith('/git-') ? 'POST' : rng.pick(['GET', 'GET', 'POST', 'HEAD']);
      const headers: Record<string, string> = {};
      const who = rng.int(5);
      if (who === 1) headers.authorization = basic(member.key);
      else if (who === 2) headers.authorization = basic(admin.key);
      else if (who === 3) headers.authorization = rng.pick(['Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64'), basic('nds_wrong'), `Bearer ${member.key}`, 'Basic ' + 'A'.repeat(8000)]);
      let body: Buffer | undefined;
      if (method === 'POST') {
        headers['content-type'] = rng.pick(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request', 'application/json', 'text/plain']);
        if (rng.chance(0.3)) headers['content-encoding'] = rng.pick(['gzip', 'br', 'x-nonsense']);
        body = rng.pick([
          Buffer.from('0000'),
          Buffer.from('0032want 0000000000000000000000000000000000000000\n00000009done\n'),
          Buffer.from('zzzz' + 'x'.repeat(100)),
          Buffer.from('00a4' + '0'.repeat(40) + ' ' + 'f'.repeat(40) + ' refs/heads/main\0report-status\n0000PACK'),
          Buffer.alloc(rng.pick([0, 1, 70_000]), 0x41),
          Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3]),
        ]);
      }
      requests.push({ method, target: `/git/${repo}${rest}`, headers, body, errors: 'own', label: `git #${i}` });
    }
    const before = sent;
    await runAll(requests);
    console.log(`# ${sent - before} git requests`);
  });

  it('is healthy afterwards, and nothing failed', async () => {
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await health.json()).ok, true);
    const me = await admin.api('/users/me');
    assert.equal(me.status, 200, 'the admin key still works');
    console.log(`# ${sent} requests in all, slowest answer ${slowest.toFixed(0)} ms, ${failures.length} failures (seed ${SEED})`);
    assert.deepEqual(failures.slice(0, 40), [], `seed ${SEED}: ${failures.length} failures`);
  });
});
