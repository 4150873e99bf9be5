/**
 * The secret behind the folder store's presigned URLs and the prefix-scoped object tokens:
 * `OBJECT_SIGNING_SECRET` when set, otherwise one generated once and kept in `<DATA_DIR>/object-signing-secret`
 * (mode 0600), so URLs stay valid across restarts of a single server. Several servers sharing one store
 * must share the setting.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ObjectUrlSigner } from './object-url-signer.js';

export interface SigningSettings {
  dataDir: string;
  objectSigningSecret: string | undefined;
}

const signers = new Map<string, ObjectUrlSigner>();

export function objectUrlSigner(settings: SigningSettings): ObjectUrlSigner {
  const id = settings.objectSigningSecret !== undefined ? `secret:${settings.objectSigningSecret}` : `dir:${settings.dataDir}`;
  let signer = signers.get(id);
  if (!signer) {
    signer = new ObjectUrlSigner(settings.objectSigningSecret ?? persistedSecret(settings.dataDir));
    signers.set(id, signer);
  }
  return signer;
}

function persistedSecret(dataDir: string): string {
  const file = path.join(dataDir, 'object-signing-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    // Another process wrote it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
}
