/** `nds admin users ...` and `nds admin keys ...`: accounts and the keys of service and test accounts. */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { bytesText, heldText } from '../core/byte-size.js';
import { info, printJson, printTable } from './output.js';

type Row = Record<string, unknown>;

const KINDS = ['person', 'service', 'test'];
const userColumns = ['username', 'email', 'status', 'tier', 'role', 'kind', 'live_keys', 'created_at'];

async function client(): Promise<ApiClient> {
  const api = await ApiClient.fromEnvironment();
  api.requireKey();
  return api;
}

const userPath = (username: string) => encodeURIComponent(username);

function printUser(user: Row): void {
  const width = Math.max(...Object.keys(user).map((k) => k.length));
  for (const [k, v] of Object.entries(user)) process.stdout.write(`${k.padEnd(width)}  ${v === null || v === undefined ? '-' : String(v)}\n`);
}

function registerUserCommands(admin: Command): void {
  const users = admin.command('users').description('accounts: list, show, approve or deny upload access, revoke, change kind, storage limits');

  users
    .command('list')
    .description('list accounts (statuses, tiers, roles, kinds) and open upload-access requests')
    .option('--status <status>', 'pending | verified | approved | revoked')
    .option('--kind <kind>', 'person | service | test')
    .option('--role <role>', 'member | admin | owner')
    .option('--requests', 'only accounts with an open upload-access request')
    .option('--limit <n>', 'at most this many (1-500)', '100')
    .option('--json', 'machine output')
    .action(async (opts: { status?: string; kind?: string; role?: string; requests?: boolean; limit: string; json?: boolean }) => {
      const q = new URLSearchParams({ limit: opts.limit });
      if (opts.status) q.set('status', opts.status);
      if (opts.kind) q.set('kind', opts.kind);
      if (opts.role) q.set('role', opts.role);
      if (opts.requests) q.set('requests', 'true');
      const answer = await (await client()).request<{ users: Row[]; total: number; open_requests: Row[] }>(`/admin/users?${q}`);
      if (opts.json) return printJson(answer);
      printTable(answer.users, userColumns);
      info(`${answer.users.length} of ${answer.total} accounts`);
      if (answer.open_requests.length) {
        process.stdout.write('\nopen upload-access requests\n');
        printTable(answer.open_requests, ['username', 'requested_at']);
      }
    });

  users
    .command('show <username>')
    .description('one account')
    .option('--json', 'machine output')
    .action(async (username: string, opts: { json?: boolean }) => {
      const user = await (await client()).request<Row>(`/admin/users/${userPath(username)}`);
      if (opts.json) return printJson(user);
      printUser(user);
    });

  users
    .command('approve <username>')
    .description('grant upload access to a verified account (they get a mail)')
    .option('--json', 'machine output')
    .action(async (username: string, opts: { json?: boolean }) => {
      const user = await (await client()).request<Row>(`/admin/approve/${userPath(username)}`, { method: 'POST' });
      if (opts.json) return printJson(user);
      process.stdout.write(`approved ${username} (status ${String(user.status)}, tier ${String(user.tier)})\n`);
    });

  users
    .command('deny <username>')
    .description('deny an open request for upload access, with a reason they get by mail (they may ask again)')
    .requiredOption('--reason <text>', 'why the request is denied')
    .option('--json', 'machine output')
    .action(async (username: string, opts: { reason: string; json?: boolean }) => {
      const user = await (await client()).request<Row>(`/admin/deny/${userPath(username)}`, { method: 'POST', body: { reason: opts.reason } });
      if (opts.json) return printJson(user);
      process.stdout.write(`denied the upload-access request of ${username} (status ${String(user.status)})\n`);
    });

  users
    .command('revoke <username>')
    .description("revoke an account's access: its keys and sessions end at once")
    .option('--json', 'machine output')
    .action(async (username: string, opts: { json?: boolean }) => {
      const user = await (await client()).request<Row>(`/admin/revoke/${userPath(username)}`, { method: 'POST' });
      if (opts.json) return printJson(user);
      process.stdout.write(`revoked ${username} (${String(user.keys_revoked)} keys revoked)\n`);
    });

  users
    .command('kind <username> <kind>')
    .description('change the account kind to person, service or test (owner only)')
    .option('--expected <kind>', 'only if the kind is still this (compare-and-set)')
    .option('--json', 'machine output')
    .action(async (username: string, kind: string, opts: { expected?: string; json?: boolean }) => {
      if (!KINDS.includes(kind)) throw new CliError(`kind must be one of ${KINDS.join(', ')}`);
      const body = opts.expected ? { kind, expected_kind: opts.expected } : { kind };
      const user = await (await client()).request<Row>(`/admin/users/${userPath(username)}/kind`, { method: 'POST', body });
      if (opts.json) return printJson(user);
      process.stdout.write(`${username} is now a ${String(user.kind)} account\n`);
    });

  users
    .command('quota <username> [limit]')
    .description("show what a user's datasets hold against their storage limits; with a limit (50GiB, 2TB, 1000000 bytes; none: no limit; default: the settings'), set the user's own")
    .option('--json', 'machine output')
    .action(async (username: string, limit: string | undefined, opts: { json?: boolean }) => {
      const api = await client();
      const path = `/admin/users/${userPath(username)}`;
      const storage = limit === undefined
        ? await api.request<AdminStorage>(`${path}/storage`)
        : await api.request<AdminStorage>(`${path}/storage-quota`, { method: 'POST', body: { quota_bytes: parseLimit(limit) } });
      if (opts.json) return printJson(storage);
      const own = storage.account_quota_bytes === null ? "the settings'" : storage.account_quota_bytes === 0 ? 'none (set for this account)' : `${bytesText(storage.account_quota_bytes)} (set for this account)`;
      process.stdout.write(
        `${username}\nlimit    ${own}\nall      ${heldText(storage.used_bytes, storage.quota_bytes)}\nsandbox  ${heldText(storage.sandbox.used_bytes, storage.sandbox.quota_bytes)}\n`,
      );
    });
}

interface AdminStorage {
  used_bytes: number;
  quota_bytes: number | null;
  sandbox: { used_bytes: number; quota_bytes: number | null };
  account_quota_bytes: number | null;
}

const UNITS: Record<string, number> = { '': 1, b: 1, bytes: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A limit as typed: bytes with an optional unit (`50GiB`, `2 TB`), `none` (no limit: 0) or `default` (the settings': null). */
function parseLimit(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (t === 'default') return null;
  if (t === 'none') return 0;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(t);
  const unit = m ? UNITS[m[2]!] : undefined;
  if (!m || unit === undefined) throw new CliError(`${text} is not a limit: give bytes with an optional unit (50GiB, 2TB, 1000000), none, or default`);
  const bytes = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw new CliError(`${text} is too large a limit`);
  return bytes;
}

function registerKeyCommands(admin: Command): void {
  const keys = admin.command('keys').description('keys of service and test accounts (owner only)');

  keys
    .command('create')
    .description('mint a key for a service or test account; printed once')
    .requiredOption('--username <username>', 'the account')
    .requiredOption('--name <name>', 'a name for the key')
    .option('--json', 'machine output')
    .action(async (opts: { username: string; name: string; json?: boolean }) => {
      const answer = await (await client()).request<{ api_key: string; key: Row }>(`/admin/users/${userPath(opts.username)}/keys`, { method: 'POST', body: { name: opts.name } });
      if (opts.json) return printJson(answer);
      info(`key ${String(answer.key.id)} "${opts.name}" created for ${opts.username}; it is shown only this once:`);
      process.stdout.write(`${answer.api_key}\n`);
    });

  keys
    .command('list')
    .description("list an account's live keys")
    .requiredOption('--username <username>', 'the account')
    .option('--json', 'machine output')
    .action(async (opts: { username: string; json?: boolean }) => {
      const answer = await (await client()).request<{ keys: Row[] }>(`/admin/users/${userPath(opts.username)}/keys`);
      if (opts.json) return printJson(answer);
      printTable(answer.keys, ['id', 'name', 'prefix', 'created_at', 'last_used_at']);
    });

  keys
    .command('revoke <id>')
    .description("revoke one of an account's keys")
    .requiredOption('--username <username>', 'the account')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { username: string; json?: boolean }) => {
      if (!/^\d+$/.test(id)) throw new CliError(`not a key id: ${id}`);
      const answer = await (await client()).request(`/admin/users/${userPath(opts.username)}/keys/${id}`, { method: 'DELETE' });
      if (opts.json) return printJson(answer);
      process.stdout.write(`revoked key ${id} of ${opts.username}\n`);
    });
}

export function registerAdminUserCommands(admin: Command): void {
  registerUserCommands(admin);
  registerKeyCommands(admin);
}
