/**
 * The object stores the dataset tests run on: the folder store always, and the S3 store against the real
 * radosgw of scripts/ci/services/radosgw.sh when TEST_S3_URL is set. Each S3 run gets a fresh bucket, since
 * dataset ids restart at nd000001 in every test database.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { parseS3Url, S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import type { TestServer } from '../support/test-server.js';

export interface StoreVariant {
  name: string;
  /** Why the variant is skipped; undefined = it runs. */
  skip: string | undefined;
  /** Settings for startTestServer (a fresh bucket for S3). */
  setup(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const s3Url = process.env.TEST_S3_URL;

export const storeVariants: StoreVariant[] = [
  { name: 'file store', skip: undefined, setup: async () => ({ env: {}, cleanup: async () => {} }) },
  {
    name: s3Url ? 'S3 store (radosgw)' : 'S3 store (radosgw; skipped: TEST_S3_URL is not set)',
    skip: s3Url ? undefined : 'TEST_S3_URL is not set (run scripts/ci/services/radosgw.sh and source scripts/ci/env.sh)',
    async setup() {
      const loc = parseS3Url(s3Url!);
      const bucket = `nds-ds-${randomBytes(5).toString('hex')}`;
      const client = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId!, secretAccessKey: loc.secretAccessKey! } });
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      const url = new URL(s3Url!);
      const env = { OBJECT_STORE_URL: `s3://${bucket}${url.search}` };
      return {
        env,
        async cleanup() {
          const store = S3ObjectStore.fromUrl(env.OBJECT_STORE_URL);
          await store.deletePrefix('');
          await store.close();
          await client.send(new DeleteBucketCommand({ Bucket: bucket }));
          client.destroy();
        },
      };
    },
  },
];

/** An approved account that completed the sandbox training: it may fill real datasets. */
export async function createUploader(server: TestServer, options: { role?: 'member' | 'admin' } = {}): Promise<TestAccount> {
  const account = await createAccount(server, { role: options.role });
  const user = await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', account.user.id).returningAll().executeTakeFirstOrThrow();
  return { ...account, user };
}

export async function json<T = any>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected HTTP ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
