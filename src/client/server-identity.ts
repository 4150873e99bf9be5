/**
 * Which nds server a client talks to, and with which key: one rule for the `nds` command, the TypeScript
 * client and (mirrored in `clients/python/nds_client/identity.py`) the Python client (decision 0021). The URL
 * is the one given in code, else `NDS_API_URL`, else the one `nds auth login` stored, else
 * `http://localhost:8080`; the key is the one given, else `NDS_API_KEY`, else the stored one. A key goes only
 * to the server it belongs to: `NDS_API_KEY` not to a URL other than `NDS_API_URL` (when that is set), the
 * stored key only to the stored URL.
 *
 * This file owns the credentials file's format (`$XDG_CONFIG_HOME/nds/credentials.json`, else
 * `~/.config/nds/credentials.json`; `src/cli/credentials.ts` writes it). It imports nothing of nds, and loads
 * `node:fs` only when it reads the file, so the client still bundles for browsers.
 */

/** What `nds auth login` stores (mode 0600). */
export interface StoredCredentials {
  api_url: string;
  api_key: string;
  username?: string;
  saved_at: string;
}

/** The server of a client that is told nothing: `nds serve` on this machine with its default port. */
export const DEFAULT_API_URL = 'http://localhost:8080';

/** Where the URL came from: given in code, `NDS_API_URL`, the credentials file, or the default. */
export type UrlSource = 'given' | 'NDS_API_URL' | 'credentials' | 'default';
/** Where the key came from; `undefined` when there is none (public data only). */
export type KeySource = 'given' | 'NDS_API_KEY' | 'credentials' | undefined;

export interface ServerIdentity {
  baseUrl: string;
  apiKey: string | undefined;
  urlSource: UrlSource;
  keySource: KeySource;
}

export interface IdentityInput {
  /** Given in code (an option, a flag); wins over everything. */
  baseUrl?: string;
  apiKey?: string;
  /** `NDS_API_URL` and `NDS_API_KEY` of the environment (empty counts as unset). */
  envUrl?: string;
  envKey?: string;
  /** The credentials file; `undefined` reads none. */
  credentialsFile?: string;
}

const trimUrl = (url: string) => url.trim().replace(/\/+$/, '');
const present = (v: string | undefined) => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);

/** `$XDG_CONFIG_HOME/nds/credentials.json`, else `$HOME/.config/nds/credentials.json`. */
export function credentialsFilePath(env: { XDG_CONFIG_HOME?: string; HOME?: string }): string {
  const configHome = present(env.XDG_CONFIG_HOME) ?? `${(present(env.HOME) ?? '.').replace(/\/+$/, '')}/.config`;
  return `${configHome.replace(/\/+$/, '')}/nds/credentials.json`;
}

/** The stored credentials, or `undefined` when the file is missing, unreadable or not credentials. */
export async function readStoredCredentials(file: string): Promise<StoredCredentials | undefined> {
  try {
    const { readFile } = await import('node:fs/promises');
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<StoredCredentials>;
    if (typeof parsed.api_key !== 'string' || typeof parsed.api_url !== 'string') return undefined;
    return parsed as StoredCredentials;
  } catch {
    return undefined;
  }
}

/** The server and key by the rule above; reads the credentials file only when the code and environment leave something open. */
export async function resolveServerIdentity(input: IdentityInput): Promise<ServerIdentity> {
  const given = present(input.baseUrl);
  const envUrl = present(input.envUrl);
  const givenKey = present(input.apiKey);
  const envKey = present(input.envKey);
  const needStored = (!given && !envUrl) || (!givenKey && !envKey);
  const stored = needStored && input.credentialsFile ? await readStoredCredentials(input.credentialsFile) : undefined;

  const [baseUrl, urlSource]: [string, UrlSource] = given
    ? [trimUrl(given), 'given']
    : envUrl
      ? [trimUrl(envUrl), 'NDS_API_URL']
      : stored
        ? [trimUrl(stored.api_url), 'credentials']
        : [DEFAULT_API_URL, 'default'];

  if (givenKey) return { baseUrl, apiKey: givenKey, urlSource, keySource: 'given' };
  if (envKey && (!envUrl || trimUrl(envUrl) === baseUrl)) return { baseUrl, apiKey: envKey, urlSource, keySource: 'NDS_API_KEY' };
  if (stored && trimUrl(stored.api_url) === baseUrl) return { baseUrl, apiKey: stored.api_key, urlSource, keySource: 'credentials' };
  return { baseUrl, apiKey: undefined, urlSource, keySource: undefined };
}
