/**
 * The client side of device sign-in (RFC 8628): start a code pair, show the code and the link (and open the
 * browser when there is one), poll the token endpoint at the server's interval, and return the grant.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import type { DeviceStart } from '../accounts/device-flow.js';
import type { ApiClient } from './api-client.js';
import { ApiError } from './api-client.js';
import { CliError } from './cli-error.js';
import { info } from './output.js';

export interface DeviceGrant {
  api_key: string;
  key: { id: number; name: string; prefix: string };
  user: { username: string; role: string; kind: string; status: string };
}

export interface DeviceSignInOptions {
  /** Open the browser on the link (default: no). */
  openBrowser: boolean;
  /** `signup`: the link goes to the account creation page first, then on to the code. */
  purpose: 'login' | 'signup';
  /** Waits between polls; tests may shorten it. Defaults to a timer. */
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The answer's JSON object, or `{}` where it is not JSON. */
function jsonObject(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Starts the system's opener on `url` and forgets it; a failure to open is not an error (the link is printed). */
function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The printed link is the fallback.
  }
}

/**
 * Whether `link` is an http(s) page of the server at `apiBaseUrl`. The desktop's opener hands other schemes to
 * local programs (`file:` runs an app on macOS; `smb:`, custom handlers), so a server's link is opened only
 * when it is its own page; any other is printed for the person to judge.
 */
export function isOwnPage(link: string, apiBaseUrl: string): boolean {
  try {
    const url = new URL(link);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === new URL(apiBaseUrl).origin;
  } catch {
    return false;
  }
}

export async function deviceSignIn(api: ApiClient, options: DeviceSignInOptions): Promise<DeviceGrant> {
  const sleep = options.sleep ?? wait;
  const start = await api.request<DeviceStart>('/auth/device/start', { method: 'POST', anonymous: true, body: { machine_name: hostname().slice(0, 100) } });
  const link =
    options.purpose === 'signup'
      ? `${api.baseUrl}/signup?next=${encodeURIComponent(`/device?code=${start.user_code}`)}`
      : start.verification_uri_complete;
  info(`Your code: ${start.user_code}`);
  info(options.purpose === 'signup' ? `Create your account and approve the code at:\n  ${link}` : `Approve it in your browser at:\n  ${link}`);
  info(`(or open ${start.verification_uri} and type the code)`);
  if (options.openBrowser && isOwnPage(link, api.baseUrl)) openInBrowser(link);
  else if (options.openBrowser) info(`(not opening it: the server's link is not a page of ${new URL(api.baseUrl).origin})`);
  info('Waiting for approval...');

  let intervalMs = Math.max(1, start.interval) * 1000;
  const deadline = Date.now() + start.expires_in * 1000;
  for (;;) {
    await sleep(intervalMs);
    const res = await api.raw('/auth/device/token', { method: 'POST', anonymous: true, body: { device_code: start.device_code } });
    const body = jsonObject(await api.text(res));
    if (res.ok) return body as unknown as DeviceGrant;
    if (res.status !== 400 || typeof body.error !== 'string') throw new ApiError(res.status, body);
    if (body.error === 'authorization_pending') {
      if (Date.now() > deadline) throw new CliError('the code expired before it was approved; run the command again');
      continue;
    }
    // RFC 8628 section 3.5: slow_down adds 5 seconds to the interval, for this and every later poll.
    if (body.error === 'slow_down') {
      intervalMs += 5000;
      continue;
    }
    const reason = typeof body.reason === 'string' ? body.reason : body.error;
    throw new CliError(`${typeof body.message === 'string' ? body.message : 'sign-in refused'} (${reason})`);
  }
}
