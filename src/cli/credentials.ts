/** The stored API key of the client: `$XDG_CONFIG_HOME/nds/credentials.json`, mode 0600. */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface StoredCredentials {
  api_url: string;
  api_key: string;
  username?: string;
  saved_at: string;
}

export async function readCredentials(file: string): Promise<StoredCredentials | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as StoredCredentials;
    return typeof parsed.api_key === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

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
