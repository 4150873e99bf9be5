import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';

/**
 * docs/api.md: a pending (unverified) account gives `account_pending`, a revoked one `account_revoked`,
 * an account sharing an identity with another `identity_conflict`. Throws the first that applies.
 */
export function assertAccountUsable(user: User): void {
  if (user.status === 'revoked') throw new NdsError('account_revoked');
  if (user.identity_conflict) throw new NdsError('identity_conflict');
  if (user.status === 'pending') throw new NdsError('account_pending');
}

/** Whether an account may act at all (`assertAccountUsable` would let it through). */
export function isAccountUsable(user: User): boolean {
  return user.status !== 'revoked' && user.status !== 'pending' && !user.identity_conflict;
}

const roleRank = { member: 0, admin: 1, owner: 2 } as const;

export function hasRole(user: User, role: keyof typeof roleRank): boolean {
  return roleRank[user.role] >= roleRank[role];
}
