/**
 * Copy sweep benchmark (decision 0016): how long publishing and withdrawing a dataset takes at an S3 store,
 * where every object of its Zarr copy is tagged or untagged. A copy of `--objects` small objects is written to
 * a fresh bucket of the radosgw of scripts/ci/services/radosgw.sh (TEST_S3_URL), then swept public and private
 * by `sweepCopy`, beside two baselines measured in the same run on the same objects with the same concurrency:
 * writing the copy (one PUT each) and a HEAD of each object (the cheapest request there is). Each sweep is
 * checked with anonymous reads of a sample under the documented bucket policy.
 * Run: source scripts/ci/env.sh; node --import tsx bench/copy-sweep.ts [--objects 4000] [--bytes 4096]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, GetObjectCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { createUser } from '../src/accounts/users.js';
import { sweepCopy } from '../src/conversion/copy-exposure.js';
import { loadConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import { unsetDatasetColumns } from '../src/datasets/create-dataset.js';
import { insertDatasetRow, updateDatasetFields } from '../src/datasets/dataset-queries.js';
import { mapLimit } from '../src/core/map-limit.js';
import { closeDeps, openDeps, PROCESS_PARTS } from '../src/lifecycle.js';
import { publicReadPolicy } from '../src/objects/public-read.js';
import { parseS3Url } from '../src/objects/s3-object-store.js';
import { option } from './bench-args.js';

const count = Number(option('objects', '4000'));
const size = Number(option('bytes', '4096'));
const s3Url = process.env.TEST_S3_URL;
if (!s3Url) {
  process.stderr.write('copy-sweep needs TEST_S3_URL (bash scripts/ci/services/radosgw.sh; source scripts/ci/env.sh)\n');
  process.exit(2);
}

const loc = parseS3Url(s3Url);
const bucket = `nds-bench-${randomBytes(4).toString('hex')}`;
const admin = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId!, secretAccessKey: loc.secretAccessKey! } });
const anonymous = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: '', secretAccessKey: '' }, signer: { sign: async (r) => r } });
await admin.send(new CreateBucketCommand({ Bucket: bucket }));
await admin.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: JSON.stringify(publicReadPolicy(bucket)) }));

const dataDir = await mkdtemp(join(tmpdir(), 'nds-bench-sweep-'));
const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'pglite:memory', OBJECT_STORE_URL: `s3://${bucket}${new URL(s3Url).search}`, LOG_LEVEL: 'warn' });
const opened = await openDeps({ config, log: createLogger('warn') }, PROCESS_PARTS.worker);
const { deps } = opened;
const id = 'nd000001';

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

/** How many of a sample of the copy's keys an anonymous GET reads. */
async function anonymouslyReadable(keys: string[]): Promise<number> {
  const answers = await mapLimit(keys, 16, async (Key): Promise<number> => {
    try {
      await (await anonymous.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToByteArray();
      return 1;
    } catch {
      return 0;
    }
  });
  return answers.reduce((a, b) => a + b, 0);
}

try {
  const owner = await createUser(deps.db, { username: 'bench-owner', email: 'bench@example.org', status: 'approved', role: 'member', kind: 'person' }, new Date());
  await insertDatasetRow(deps.db, { id, name: 'sweep bench', owner_id: owner.id, visibility: 'private', source_repo: null, license: null, ...unsetDatasetColumns });
  const keys = Array.from({ length: count }, (_, i) => `${id}/zarr/sub-${String(i % 20).padStart(2, '0')}/eeg/rec.zarr/eeg_250hz/0/c/${i}/0`);
  const body = randomBytes(size);
  const sample = keys.filter((_, i) => i % Math.max(1, Math.floor(count / 200)) === 0);

  const writeS = await timed(() => mapLimit(keys, 16, (k) => deps.objects.put(k, body)));
  const headS = await timed(() => mapLimit(keys, 16, (k) => deps.objects.head(k)));
  if ((await anonymouslyReadable(sample)) !== 0) throw new Error('a private copy was readable before any sweep');

  await updateDatasetFields(deps.db, id, { visibility: 'public' }, new Date());
  const publishS = await timed(() => sweepCopy(deps, id));
  const opened_ = await anonymouslyReadable(sample);
  await updateDatasetFields(deps.db, id, { visibility: 'private' }, new Date());
  const withdrawS = await timed(() => sweepCopy(deps, id));
  const closed = sample.length - (await anonymouslyReadable(sample));
  if (opened_ !== sample.length || closed !== sample.length) throw new Error(`sweeps incomplete: ${opened_}/${sample.length} opened, ${closed}/${sample.length} closed`);

  const rate = (s: number) => `${Math.round(count / s)} objects/s`;
  process.stdout.write(`copy of ${count} objects of ${size} bytes, radosgw at ${loc.endpoint}, 16 requests at a time\n`);
  process.stdout.write(`baseline: write the copy        ${writeS.toFixed(2)} s  ${rate(writeS)}\n`);
  process.stdout.write(`baseline: HEAD each object      ${headS.toFixed(2)} s  ${rate(headS)}\n`);
  process.stdout.write(`publish (tag every object)      ${publishS.toFixed(2)} s  ${rate(publishS)}  ${(publishS / writeS).toFixed(2)}× the write, ${(publishS / headS).toFixed(2)}× the HEADs\n`);
  process.stdout.write(`withdraw (untag every object)   ${withdrawS.toFixed(2)} s  ${rate(withdrawS)}  ${(withdrawS / writeS).toFixed(2)}× the write, ${(withdrawS / headS).toFixed(2)}× the HEADs\n`);
  process.stdout.write(`anonymous reads of ${sample.length} sampled keys: all after publishing, none after withdrawing\n`);
} finally {
  await deps.objects.deletePrefix('');
  await closeDeps(opened);
  await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
  admin.destroy();
  anonymous.destroy();
  await rm(dataDir, { recursive: true, force: true });
}
