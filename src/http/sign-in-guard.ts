/** The rate limits of the sign-in routes, as a request meets them: by the address asked for and the client's IP. */
import type { Context } from 'hono';
import { spend } from '../accounts/sign-in-limits.js';
import type { AppEnv } from './app-env.js';
import { clientIp } from './client-ip.js';

/** Counts a mail asked for against its address and the asking IP; past either limit, 429 and nothing is sent. */
export function spendMail(c: Context<AppEnv>, email: string): void {
  const limits = c.var.deps.signInLimits;
  spend([limits.mailPerAddress, email.toLowerCase()], [limits.mailPerIp, clientIp(c)]);
}
