/**
 * `nds datasets download <id> <folder>`: reads the manifest, refuses it whole if any path could escape the
 * folder (`..`, absolute) or write into a `.git` folder, or if two paths would be one file on macOS or
 * Windows (case, Unicode form) or a file is another's folder, then fetches every file with download credentials, several at once, hashing on
 * the way; a file whose bytes do not match its sha256 fails the download, naming the file. Each file is
 * written beside its place (`.nds-partial`) and renamed only once verified; files already there with the
 * right size and hash are kept, so a re-run resumes.
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { pathConflicts, SHA256_HEX, unsafePathReason } from '../datasets/manifest.js';
import type { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { getToFile, hashFile, TransferError, withRetries } from './http-transfer.js';
import type { Progress } from './transfer-progress.js';

interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

interface Credentials {
  token: string;
  endpoint: string;
  expires_at: string;
}

export interface DownloadOptions {
  version?: string;
  concurrency: number;
  retries: number;
  progress: Progress;
}

export interface DownloadSummary {
  dataset_id: string;
  version: string;
  files: number;
  bytes: number;
  downloaded: number;
  kept: number;
}

export async function downloadDataset(api: ApiClient, datasetId: string, folder: string, options: DownloadOptions): Promise<DownloadSummary> {
  const id = encodeURIComponent(datasetId);
  const query = options.version ? `?version=${encodeURIComponent(options.version)}` : '';
  const manifest = await api.request<{ version: string; files: ManifestEntry[] }>(`/datasets/${id}/manifest${query}`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
  const root = path.resolve(folder);
  // The server's rules (a server of an older nds, or one not to be trusted, may send anything).
  for (const f of manifest.files) {
    const unsafe = typeof f.path === 'string' ? unsafePathReason(f.path) : 'not text';
    if (unsafe !== undefined) throw new CliError(`refusing the manifest: entry ${JSON.stringify(f.path)} is ${unsafe}`);
    if (!SHA256_HEX.test(f.sha256) || !Number.isSafeInteger(f.size) || f.size < 0) {
      throw new CliError(`refusing the manifest: entry ${JSON.stringify(f.path)} has no valid size and sha256`);
    }
    const dest = path.resolve(root, f.path);
    if (!dest.startsWith(root + path.sep)) throw new CliError(`refusing the manifest: ${JSON.stringify(f.path)} leaves ${root}`);
  }
  const conflicts = pathConflicts(manifest.files.map((f) => f.path), 1);
  if (conflicts.length > 0) throw new CliError(`refusing the manifest: ${conflicts[0]}`);
  const summary: DownloadSummary = { dataset_id: datasetId, version: manifest.version, files: manifest.files.length, bytes: 0, downloaded: 0, kept: 0 };
  summary.bytes = manifest.files.reduce((s, f) => s + f.size, 0);
  let credentials: Credentials | undefined;
  const freshCredentials = async (): Promise<Credentials> => {
    // Renewed a minute before they expire, so a long download never sends a stale token.
    if (!credentials || Date.parse(credentials.expires_at) - Date.now() < 60_000) {
      credentials = await api.request<Credentials>(`/datasets/${id}/download-credentials`, { method: 'POST' });
    }
    return credentials;
  };
  options.progress.start(summary.bytes);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < manifest.files.length) {
      const f = manifest.files[next++];
      const dest = path.join(root, ...f.path.split('/'));
      if (await alreadyThere(dest, f)) {
        summary.kept++;
        options.progress.skip(f.size);
        continue;
      }
      await mkdir(path.dirname(dest), { recursive: true });
      const partial = `${dest}.nds-partial`;
      const got = await withRetries(
        options.retries + 1,
        async () => {
          const c = await freshCredentials();
          let received = 0;
          try {
            return await getToFile(`${c.endpoint}${datasetId}/objects/${f.sha256}`, { authorization: `Bearer ${c.token}` }, partial, f.size, (n) => {
              received += n;
              options.progress.advance(n);
            });
          } catch (err) {
            options.progress.advance(-received);
            if (err instanceof TransferError && err.status === 403) credentials = undefined;
            throw err;
          }
        },
        (err, attempt) => options.progress.log(`retrying ${f.path} (attempt ${attempt + 1}): ${err.message}`),
      ).catch((err: unknown) => {
        if (err instanceof TransferError) throw new CliError(`${f.path}: ${err.message}`);
        throw err;
      });
      if (got.size !== f.size || got.sha256 !== f.sha256) {
        await rm(partial, { force: true });
        throw new CliError(`${f.path}: content does not match the manifest (got ${got.size} bytes, sha256 ${got.sha256}; expected ${f.size} bytes, sha256 ${f.sha256})`);
      }
      await rename(partial, dest);
      summary.downloaded++;
    }
  };
  // The first failure stops the other workers from starting new files.
  const guarded = () => worker().catch((err: unknown) => {
    failed = true;
    throw err;
  });
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, manifest.files.length)) }, guarded));
  options.progress.stop();
  return summary;
}

async function alreadyThere(dest: string, f: ManifestEntry): Promise<boolean> {
  const s = await stat(dest).catch(() => undefined);
  if (!s?.isFile() || s.size !== f.size) return false;
  return (await hashFile(dest)).sha256 === f.sha256;
}
