/** `nds auth ...`: device sign-in, sign-out, status, the account's keys, and git's credential helper. */
import type { Command } from 'commander';
import type { PresentedKey as Key } from '../accounts/api-keys.js';
import { readStoredCredentials, type UrlSource } from '../client/server-identity.js';
import { heldText } from '../core/byte-size.js';
import { loadClientConfig } from '../core/config.js';
import { ApiClient, ApiError } from './api-client.js';
import { CliError } from './cli-error.js';
import { deleteCredentials, writeCredentials } from './credentials.js';
import { deviceSignIn } from './device-sign-in.js';
import { info, printJson, printTable } from './output.js';

/** Where the server's URL came from, in words: `nds auth status` says it beside the URL. */
function urlOrigin(source: UrlSource, credentialsFile: string): string {
  if (source === 'NDS_API_URL') return 'from NDS_API_URL';
  if (source === 'credentials') return `stored by \`nds auth login\` in ${credentialsFile}`;
  if (source === 'default') return 'the default; set NDS_API_URL for another server';
  return 'given';
}

async function signIn(purpose: 'login' | 'signup', opts: { json?: boolean }): Promise<void> {
  const config = loadClientConfig();
  // The server of this terminal: NDS_API_URL, else the one signed in to before, else the default.
  const known = await ApiClient.fromEnvironment(config);
  const api = new ApiClient(known.baseUrl, undefined, undefined, known.urlSource, known.command);
  info(`signing in to ${api.baseUrl}`);
  const grant = await deviceSignIn(api, { purpose, openBrowser: config.openBrowser });
  await writeCredentials(config.credentialsFile, { api_url: api.baseUrl, api_key: grant.api_key, username: grant.user.username, saved_at: new Date().toISOString() });
  if (opts.json) return printJson({ username: grant.user.username, user: grant.user, key: grant.key, credentials_file: config.credentialsFile });
  info(`Key ${grant.key.prefix} saved to ${config.credentialsFile}`);
  process.stdout.write(`signed in as ${grant.user.username}\n`);
}

/** Reads git's credential request (`key=value` lines up to a blank line) from stdin. */
async function readCredentialRequest(): Promise<Record<string, string>> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += chunk;
    if (/\n\n|^\n/.test(text)) break;
  }
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields[line.slice(0, eq)] = line.slice(eq + 1).trim();
  }
  return fields;
}

export function registerAuthCommands(program: Command): void {
  const auth = program.command('auth').description('sign in and out, your API keys');

  auth
    .command('login')
    .description('sign this terminal in through your browser (device sign-in) and store its key')
    .option('--json', 'machine output')
    .action((opts: { json?: boolean }) => signIn('login', opts));

  auth
    .command('signup')
    .description('create an account in your browser, then sign this terminal in')
    .option('--json', 'machine output')
    .action((opts: { json?: boolean }) => signIn('signup', opts));

  auth
    .command('logout')
    .description('revoke the stored key on the server and forget it')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const config = loadClientConfig();
      const stored = await readStoredCredentials(config.credentialsFile);
      if (!stored) {
        if (opts.json) return printJson({ signed_out: false, reason: 'not signed in' });
        return info(`not signed in (no ${config.credentialsFile})${config.apiKey ? '; NDS_API_KEY is set and left alone' : ''}`);
      }
      let revoked = true;
      try {
        await new ApiClient(stored.api_url, stored.api_key).request('/auth/keys/current', { method: 'DELETE' });
      } catch (err) {
        // A key the server no longer knows is as good as revoked; anything else must not lose the key silently.
        if (!(err instanceof ApiError && err.status === 401)) throw err;
        revoked = false;
      }
      await deleteCredentials(config.credentialsFile);
      if (opts.json) return printJson({ signed_out: true, key_revoked: revoked, username: stored.username ?? null });
      process.stdout.write(`signed out${stored.username ? ` ${stored.username}` : ''}\n`);
    });

  auth
    .command('status')
    .description('show which server this terminal talks to, and who the configured key signs in as')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const config = loadClientConfig();
      const api = await ApiClient.fromEnvironment(config);
      const server = `${api.baseUrl} (${urlOrigin(api.urlSource, config.credentialsFile)})`;
      if (!api.apiKey) {
        if (opts.json) printJson({ signed_in: false, api_url: api.baseUrl, api_url_source: api.urlSource });
        else process.stdout.write(`server  ${server}\n`);
        throw new CliError(`not signed in to ${api.baseUrl}: run \`${api.command} auth login\``);
      }
      const user = await api.request<Record<string, unknown>>('/users/me');
      const storage = await storageOf(api);
      if (opts.json) return printJson({ signed_in: true, api_url: api.baseUrl, api_url_source: api.urlSource, key_source: api.keySource, user, ...(storage ? { storage } : {}) });
      process.stdout.write(
        `signed in to ${api.baseUrl} as ${String(user.username)}\nserver  ${server}\nstatus  ${String(user.status)}\ntier    ${String(user.tier)}\nrole    ${String(user.role)}\nkind    ${String(user.kind)}\nkey     from ${api.keySource}\n` +
          (storage ? `storage ${heldText(storage.used_bytes, storage.quota_bytes)} (sandbox datasets: ${heldText(storage.sandbox.used_bytes, storage.sandbox.quota_bytes)})\n` : ''),
      );
    });

  const keys = auth.command('keys').description("your account's API keys");

  keys
    .command('list')
    .description('list your live keys')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      const answer = await api.request<{ keys: Key[] }>('/auth/keys');
      if (opts.json) return printJson(answer);
      printTable(answer.keys.map((k) => ({ ...k, current: k.current ? '*' : '' })), ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'current']);
    });

  keys
    .command('create <name>')
    .description('mint a named key (for a machine that cannot run `nds auth login`); printed once')
    .option('--json', 'machine output')
    .action(async (name: string, opts: { json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      const answer = await api.request<{ api_key: string; key: Key }>('/auth/keys', { method: 'POST', body: { name } });
      if (opts.json) return printJson(answer);
      info(`key ${answer.key.id} "${answer.key.name}" created; it is shown only this once:`);
      process.stdout.write(`${answer.api_key}\n`);
    });

  keys
    .command('revoke <id>')
    .description('revoke one of your keys by id')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      if (!/^\d+$/.test(id)) throw new CliError(`not a key id: ${id}`);
      const answer = await api.request(`/auth/keys/${id}`, { method: 'DELETE' });
      if (opts.json) return printJson(answer);
      process.stdout.write(`revoked key ${id}\n`);
    });

  auth
    .command('git-credential <operation>')
    .description('git credential helper: answers `get` with the stored key for the API host (git config credential.helper "!nds auth git-credential")')
    .action(async (operation: string) => {
      // git also sends `store` and `erase`: the key is managed by `nds auth`, so those are ignored.
      if (operation !== 'get') return;
      const request = await readCredentialRequest();
      const api = await ApiClient.fromEnvironment();
      const base = new URL(api.baseUrl);
      if (!api.apiKey || request.host !== base.host || (request.protocol && request.protocol !== base.protocol.replace(/:$/, ''))) return;
      process.stdout.write(`username=nds\npassword=${api.apiKey}\n`);
    });
}

interface StorageBound {
  used_bytes: number;
  quota_bytes: number | null;
}

/** What the account's datasets hold (`GET /users/me/storage`); undefined from a server before quotas. */
async function storageOf(api: ApiClient): Promise<(StorageBound & { sandbox: StorageBound }) | undefined> {
  try {
    return await api.request<StorageBound & { sandbox: StorageBound }>('/users/me/storage');
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}
