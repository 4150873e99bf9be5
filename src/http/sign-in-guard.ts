/** The rate limits of the sign-in routes, as a request meets them: by the address asked for and the client's IP. */
import type { Context } from 'hono';
import { limitFailures, spend } from '../accounts/sign-in-limits.js';
import { isNdsError } from '../core/errors.js';
import type { AppEnv } from './app-env.js';
import { clientLimitKey } from './client-ip.js';

/** Counts a mail asked for against its address and the asking IP; past either limit, 429 and nothing is sent. */
export async function spendMail(c: Context<AppEnv>, email: string): Promise<void> {
  const limits = c.var.deps.signInLimits;
  await spend([limits.mailPerAddress, email.toLowerCase()], [limits.mailPerIp, clientLimitKey(c)]);
}

/**
 * Runs a mailed-code check within its failure limits: per address (10 in 15 minutes), per IP for codes (20)
 * and per IP for any sign-in (50). Past one, 429 with Retry-After before the code is looked at, so even the
 * right code waits for the window; a wrong or used-up code counts against all three.
 */
export function limitCodeFailures<T>(c: Context<AppEnv>, email: string, action: () => Promise<T>): Promise<T> {
  const limits = c.var.deps.signInLimits;
  const client = clientLimitKey(c);
  return limitFailures(
    [[limits.codeFailuresPerAccount, email.toLowerCase()], [limits.codeFailuresPerIp, client], [limits.failuresPerIp, client]],
    (err) => isNdsError(err, 'login_code_invalid'),
    action,
  );
}
