/**
 * Every filter is honoured or refused: each operation of `/openapi.json`, given a query parameter it does not
 * declare, answers 400 naming it, whoever asks and whatever the id (so a filter a route does not know is never
 * silently ignored, and the answer says nothing of what exists). Pages, the gateway and the protocols
 * (signed object URLs, git) take what they are given: a page opens with a reader's tracking tag.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface Operation {
  parameters?: Array<{ name: string; in: string; schema?: { type?: string } }>;
}

/** A value for a path parameter, plausible enough to reach the route (the check comes before any look-up). */
function pathValue(name: string, schemaType: string | undefined): string {
  if (name === 'id' || name === 'repo') return schemaType === 'integer' || schemaType === 'number' ? '1' : 'nd000001';
  if (name === 'username') return 'someone';
  if (name === 'upload_id') return '0'.repeat(32); // the route takes only 32 hex digits
  return 'x';
}

describe('query parameters a route does not declare', () => {
  let server: TestServer;
  let owner: TestAccount;
  let operations: Array<{ method: string; path: string; target: string; declared: string[] }>;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { role: 'owner' });
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => {
        const params = op.parameters ?? [];
        const target = path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(name, params.find((p) => p.name === name)?.schema?.type));
        return { method: method.toUpperCase(), path, target, declared: params.filter((p) => p.in === 'query').map((p) => p.name) };
      }),
    );
  });
  after(() => server.close());

  it('are refused with 400 naming them on every documented operation, anonymous or signed in', async () => {
    assert.ok(operations.filter((o) => o.method === 'GET').length >= 25, `${operations.length} operations`);
    const wrong: string[] = [];
    for (const op of operations) {
      for (const key of [undefined, owner.key]) {
        const res = await fetch(`${server.url}${op.target}?nds_no_such_filter=1`, {
          method: op.method,
          headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        });
        const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string; details?: string[] };
        const named = body.message?.includes('"nds_no_such_filter"') && body.details?.some((d) => d.startsWith('nds_no_such_filter: not a parameter of this route'));
        if (res.status !== 400 || body.error !== 'validation_failed' || !named) wrong.push(`${op.method} ${op.path} (${key ? 'owner' : 'anonymous'}): ${res.status} ${JSON.stringify(body)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('names what the route takes, and still takes every parameter it declares', async () => {
    const res = await fetch(`${server.url}/recordings?task=rest&sampling_rate=512`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as { message: string };
    assert.match(body.message, /^Unknown query parameter "sampling_rate": it takes dataset, subject, .*rate, rate_min, rate_max/);
    const none = (await (await fetch(`${server.url}/healthz?verbose=1`)).json()) as { message: string };
    assert.equal(none.message, 'Unknown query parameter "verbose": it takes no query parameters.');
    for (const op of operations.filter((o) => o.method === 'GET' && o.declared.length)) {
      // Every declared name passes the check (its value may still be refused by its own rule, with another message).
      const query = op.declared.map((n) => `${n}=1`).join('&');
      const answer = (await (await fetch(`${server.url}${op.target}?${query}`, { headers: { authorization: `Bearer ${owner.key}`, accept: 'application/json' } })).json().catch(() => ({}))) as { message?: string };
      assert.doesNotMatch(answer.message ?? '', /Unknown query parameter/, `${op.method} ${op.path}`);
    }
  });

  it('are taken by pages, the gateway and the assets, which open with a tag a link carried', async () => {
    for (const target of ['/?utm_source=mail', '/login?utm_source=mail', '/datasets?utm_source=mail', '/assets/nds.css?v=3']) {
      const res = await fetch(`${server.url}${target}`, { headers: { accept: 'text/html' } });
      assert.equal(res.status, 200, target);
      await res.arrayBuffer();
    }
    // The gateway answers an unknown dataset with its own 404 whatever the query (docs/gateway.md).
    const gateway = await fetch(`${server.url}/zarrproxy/nd000001/0000000000000000000000000000000000000000/x.zarr/zarr.json?nds_no_such_filter=1`);
    assert.equal(gateway.status, 404);
    await gateway.arrayBuffer();
  });
});
