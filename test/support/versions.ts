/** Creates dataset versions through the API, with their content put straight into the object store. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { TestAccount } from './accounts.js';
import type { TestServer } from './test-server.js';

/** Puts one file into the dataset's content store and creates `version` from it. */
export async function addVersion(server: TestServer, who: TestAccount, id: string, version: string): Promise<void> {
  const body = `hello ${id} ${version}\n`;
  const sha256 = createHash('sha256').update(body).digest('hex');
  await server.deps.objects.put(`${id}/objects/${sha256}`, body);
  const res = await who.api(`/datasets/${id}/versions`, { method: 'POST', body: JSON.stringify({ version, manifest: [{ path: 'README', size: Buffer.byteLength(body), sha256 }] }) });
  assert.equal(res.status, 201, await res.clone().text());
}
