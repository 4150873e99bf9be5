/**
 * The phases of an upload in parts to an S3 store (decision 0020), each timed on its own against the bucket of
 * `--s3` (scripts/ci/env.sh's TEST_S3_URL): the parts sent (`--in-flight` at a time), CompleteMultipartUpload, the
 * read-back hashed as one GET or as ranged GETs several in flight (`--ranges 16:4` = ranges of 16 MiB, 4 in
 * flight), CopyObject to another key, the staging object's delete, and the store's own `completeMultipart` as a
 * whole; and, for scale, the AWS SDK's own upload of the same bytes (`@aws-sdk/lib-storage`, the baseline of
 * bench/upload.ts). Each phase is timed in wall time, in CPU time of this process, and with `--pids` (the store's
 * processes, e.g. `$(pgrep -d, -f 'radosgw -n client.rgw$'),<its ceph-osd>`) in CPU time of the store, read from
 * /proc: on a machine shared with other work the CPU times are the figures to compare.
 * Run: node --import tsx bench/s3-completion-phases.ts --s3 "$TEST_S3_URL" [--mib 256] [--rounds 3] [--ranges 8:4,16:4,16:8] [--pids 123,456]
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { parseS3Url, S3ObjectStore } from '../src/objects/s3-object-store.js';
import { option } from './bench-args.js';
import { sdkClientFor } from './sdk-client.js';

const s3Url = option('s3', process.env.TEST_S3_URL ?? '');
const size = Number(option('mib', '256')) * 2 ** 20;
const rounds = Number(option('rounds', '3'));
const inFlight = Number(option('in-flight', '4'));
const partSize = 8 * 2 ** 20;
const rangeVariants = option('ranges', '8:4,16:4,16:8').split(',').filter(Boolean).map((v) => v.split(':').map(Number) as [number, number]);
const storePids = option('pids', '').split(',').filter(Boolean);

/** CPU seconds the store's processes have used (user and system, from /proc/<pid>/stat; clock ticks of 10 ms). */
function storeCpu(): number {
  let ticks = 0;
  for (const pid of storePids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

const location = parseS3Url(s3Url);
const client = sdkClientFor(s3Url);
const store = new S3ObjectStore(location);
const Bucket = location.bucket;
const data = randomBytes(size);
const sha256 = createHash('sha256').update(data).digest('hex');
const prefix = `bench-phases/${Date.now()}`;

interface Sample {
  wall: number;
  cpu: number;
  store: number;
}

const timed = async <T>(into: Map<string, Sample[]>, name: string, run: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const store = storeCpu();
  const out = await run();
  const used = process.cpuUsage(cpu);
  const list = into.get(name) ?? [];
  list.push({ wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, store: storeCpu() - store });
  into.set(name, list);
  return out;
};

async function sendParts(key: string): Promise<string> {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key }));
  const count = Math.ceil(size / partSize);
  let next = 1;
  const worker = async () => {
    for (let n = next++; n <= count; n = next++) {
      const body = data.subarray((n - 1) * partSize, Math.min(size, n * partSize));
      await client.send(new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber: n, Body: body, ContentLength: body.length }));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return UploadId!;
}

async function complete(key: string, uploadId: string): Promise<void> {
  const count = Math.ceil(size / partSize);
  const parts = await store.listParts(key, uploadId);
  const Parts = parts!.sort((a, b) => a.partNumber - b.partNumber).slice(0, count).map((p) => ({ PartNumber: p.partNumber, ETag: p.etag }));
  await client.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts } }));
}

async function hashOneGet(key: string): Promise<string> {
  const r = await client.send(new GetObjectCommand({ Bucket, Key: key }));
  const hash = createHash('sha256');
  for await (const chunk of r.Body as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Ranged GETs `inFlight` at a time, each buffered whole, fed to one hash in order. */
async function hashRanges(key: string, rangeMiB: number, rangesInFlight: number): Promise<string> {
  const rangeBytes = rangeMiB * 2 ** 20;
  const count = Math.ceil(size / rangeBytes);
  const fetchRange = async (i: number) => {
    const start = i * rangeBytes;
    const end = Math.min(size, start + rangeBytes) - 1;
    const r = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: `bytes=${start}-${end}` }));
    const chunks: Buffer[] = [];
    for await (const chunk of r.Body as AsyncIterable<Buffer>) chunks.push(chunk);
    return chunks;
  };
  const hash = createHash('sha256');
  const pending: Array<Promise<Buffer[]>> = [];
  for (let i = 0; i < Math.min(count, rangesInFlight); i++) pending.push(fetchRange(i));
  for (let i = 0; i < count; i++) {
    const chunks = await pending[i]!;
    if (i + rangesInFlight < count) pending.push(fetchRange(i + rangesInFlight));
    for (const c of chunks) hash.update(c);
  }
  return hash.digest('hex');
}

/** What assembling parts hashed as they came (each its own object) would cost: UploadPartCopy of every range. */
async function copyInParts(from: string, to: string): Promise<void> {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: to }));
  const count = Math.ceil(size / partSize);
  const Parts: Array<{ PartNumber: number; ETag: string | undefined }> = [];
  let next = 1;
  const worker = async () => {
    for (let n = next++; n <= count; n = next++) {
      const range = `bytes=${(n - 1) * partSize}-${Math.min(size, n * partSize) - 1}`;
      const r = await client.send(new UploadPartCopyCommand({ Bucket, Key: to, UploadId, PartNumber: n, CopySource: `${Bucket}/${from}`, CopySourceRange: range }));
      Parts[n - 1] = { PartNumber: n, ETag: r.CopyPartResult?.ETag };
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await client.send(new CompleteMultipartUploadCommand({ Bucket, Key: to, UploadId, MultipartUpload: { Parts } }));
}

const phases = new Map<string, Sample[]>();
try {
  for (let round = 1; round <= rounds; round++) {
    const staging = `${prefix}/${round}/object`;
    const uploadId = await timed(phases, 'parts sent', () => sendParts(staging));
    await timed(phases, 'complete (CompleteMultipartUpload)', () => complete(staging, uploadId));
    const one = await timed(phases, 'read-back: one GET, hashed', () => hashOneGet(staging));
    if (one !== sha256) throw new Error('read back other bytes');
    for (const [mib, n] of rangeVariants) {
      const got = await timed(phases, `read-back: ranges of ${mib} MiB, ${n} in flight, hashed`, () => hashRanges(staging, mib, n));
      if (got !== sha256) throw new Error('read back other bytes (ranges)');
    }
    const hashOnly = await timed(phases, 'SHA-256 of the bytes in memory', async () => createHash('sha256').update(data).digest('hex'));
    if (hashOnly !== sha256) throw new Error('hash');
    const CopySource = `${Bucket}/${staging}`;
    await timed(phases, 'copy (CopyObject)', () => client.send(new CopyObjectCommand({ Bucket, Key: `${prefix}/${round}/copy`, CopySource })));
    await timed(phases, 'assembly by UploadPartCopy instead (8 MiB ranges, 4 in flight)', () => copyInParts(staging, `${prefix}/${round}/part-copy`));
    await timed(phases, 'delete staging', () => client.send(new DeleteObjectCommand({ Bucket, Key: staging })));
    await timed(phases, 'for scale: lib-storage Upload of the same bytes (8 MiB parts, 4 in flight)', () =>
      new Upload({ client, params: { Bucket, Key: `${prefix}/${round}/lib-storage`, Body: data }, queueSize: inFlight, partSize }).done(),
    );
    // The store's completion as nds runs it, end to end (complete, read-back, copy, delete, head).
    const staging2 = `${prefix}/${round}/object2`;
    const uploadId2 = await sendParts(staging2);
    await timed(phases, 'S3ObjectStore.completeMultipart, whole', () => store.completeMultipart(staging2, uploadId2, Math.ceil(size / partSize), { key: `${prefix}/${round}/target`, size, sha256 }));
  }
  console.log(`Phases of a ${size / 2 ** 20} MiB upload in parts of 8 MiB (${inFlight} in flight) to ${location.endpoint}, ${rounds} rounds; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`| phase | wall s, each round | median wall | median CPU s: this process / store${storePids.length ? '' : ' (no --pids)'} |\n|---|---|---|---|`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [name, xs] of phases) {
    const store = storePids.length ? median(xs.map((x) => x.store)).toFixed(2) : '-';
    console.log(`| ${name} | ${xs.map((x) => x.wall.toFixed(2)).join(' / ')} | ${median(xs.map((x) => x.wall)).toFixed(2)} | ${median(xs.map((x) => x.cpu)).toFixed(2)} / ${store} |`);
  }
} finally {
  await store.deletePrefix(`${prefix}/`);
  client.destroy();
  await store.close();
}
