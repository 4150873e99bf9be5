/** Small factories for accounts and keys, written straight to the database of a test server. */
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { createUser } from '../../src/accounts/users.js';
import type { User, UserKind, UserRole, UserStatus } from '../../src/db/accounts-tables.js';
import type { TestServer } from './test-server.js';

let counter = 0;

export interface TestAccount {
  user: User;
  key: string;
  /** `fetch` against the server with this account's bearer key. */
  api(path: string, init?: RequestInit): Promise<Response>;
}

export async function createAccount(
  server: TestServer,
  options: { username?: string; email?: string; status?: UserStatus; role?: UserRole; kind?: UserKind } = {},
): Promise<TestAccount> {
  counter++;
  const username = options.username ?? `user-${process.pid}-${counter}`;
  const user = await createUser(server.deps.db, {
    username,
    email: options.email ?? `${username}@example.org`,
    status: options.status ?? 'approved',
    role: options.role ?? 'member',
    kind: options.kind ?? 'person',
  }, server.deps.clock.now());
  // Keys for non-usable statuses are minted anyway: tests check how they are refused.
  const { apiKey } = await mintApiKey(server.deps.db, user.id, 'test', 'admin');
  return { user, key: apiKey, api: (p, init) => apiFetch(server, p, apiKey, init) };
}

export function apiFetch(server: TestServer, p: string, key?: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (key) headers.set('authorization', `Bearer ${key}`);
  if (init.body && typeof init.body === 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return fetch(`${server.url}${p}`, { ...init, headers });
}

/** A signed-in browser session for a user: the `Cookie` header value and a fetch that sends it with the own Origin. */
export async function createBrowserSession(server: TestServer, user: User) {
  const { createSession, SESSION_COOKIE } = await import('../../src/accounts/sessions.js');
  const { token } = await createSession(server.deps.db, user.id, server.clock.now());
  const cookie = `${SESSION_COOKIE}=${token}`;
  return {
    cookie,
    fetch(p: string, init: RequestInit = {}, origin: string | null = server.url): Promise<Response> {
      const headers = new Headers(init.headers);
      headers.set('cookie', cookie);
      if (origin) headers.set('origin', origin);
      if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(`${server.url}${p}`, { ...init, headers });
    },
  };
}
