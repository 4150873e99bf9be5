/**
 * Writing the stored API key of the client: `$XDG_CONFIG_HOME/nds/credentials.json`, mode 0600. Its format,
 * its path and how it is read belong to `client/server-identity.ts`, shared with the ML clients.
 */
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { StoredCredentials } from '../client/server-identity.js';

export async function writeCredentials(file: string, credentials: StoredCredentials): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

export async function deleteCredentials(file: string): Promise<void> {
  await rm(file, { force: true });
}
