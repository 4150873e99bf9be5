/**
 * The first owner, made in the browser: while no owner exists, `nds serve` prints a one-time setup link
 * `<PUBLIC_URL>/setup?token=<token>`. The token lives an hour and is held by the serving process as its
 * SHA-256 only (a restart prints a new link); it is compared in constant time, and it works once: the first
 * redemption claims it before the owner is created (so two posts of one form cannot make two owners), and a
 * later one answers 410 `setup_link_used`, as does any link once an owner exists.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import { NdsError } from '../core/errors.js';
import { constantTimeEqual, newOpaqueToken, sha256Hex } from '../core/secrets.js';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { createUser } from './users.js';

export const SETUP_LINK_MINUTES = 60;

export interface SetupLink {
  token: string;
  expiresAt: Date;
}

export async function ownerExists(db: Kysely<Database>): Promise<boolean> {
  return !!(await db.selectFrom('users').select('id').where('role', '=', 'owner').where('revoked_at', 'is', null).limit(1).executeTakeFirst());
}

export class OwnerSetup {
  readonly #clock: Clock;
  #tokenHash: string | undefined;
  #expiresAt = 0;
  #state: 'none' | 'open' | 'claimed' | 'used' = 'none';

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** A new link when no owner exists (any earlier link stops working); undefined when there is an owner. */
  async open(db: Kysely<Database>): Promise<SetupLink | undefined> {
    if (await ownerExists(db)) return undefined;
    const token = newOpaqueToken(32);
    const expiresAt = new Date(this.#clock.now().getTime() + SETUP_LINK_MINUTES * 60_000);
    this.#tokenHash = sha256Hex(token);
    this.#expiresAt = expiresAt.getTime();
    this.#state = 'open';
    return { token, expiresAt };
  }

  /** Throws the refusal a page shows for this token; returns when the token may be used now. */
  async check(db: Kysely<Database>, token: string): Promise<void> {
    this.#refusal(token);
    if (await ownerExists(db)) throw new NdsError('setup_link_used');
  }

  /** Creates the owner (verified, approved) with the token, once. */
  async redeem(db: Kysely<Database>, token: string, input: { username: string; email: string }): Promise<User> {
    this.#refusal(token);
    // Claimed before any await: a second post of the same form finds it taken.
    this.#state = 'claimed';
    try {
      if (await ownerExists(db)) {
        this.#state = 'used';
        throw new NdsError('setup_link_used');
      }
      const now = this.#clock.now();
      const user = await createUser(db, { username: input.username.trim().toLowerCase(), email: input.email.trim(), status: 'approved', role: 'owner', kind: 'person' }, now);
      await db.insertInto('audit_log').values({ actor_id: user.id, actor_username: user.username, action: 'owner.setup', target: user.username, details: JSON.stringify({ via: 'setup link' }), ip: null }).execute();
      this.#state = 'used';
      this.#tokenHash = undefined;
      return user;
    } catch (err) {
      // A form the person can correct (a bad username or email) leaves the link usable.
      if (this.#state === 'claimed') this.#state = 'open';
      throw err;
    }
  }

  #refusal(token: string): void {
    if (this.#state === 'used' || this.#state === 'claimed') throw new NdsError('setup_link_used');
    if (this.#state !== 'open' || !this.#tokenHash || !constantTimeEqual(sha256Hex(token), this.#tokenHash)) throw new NdsError('setup_link_invalid');
    if (this.#clock.now().getTime() > this.#expiresAt) throw new NdsError('setup_link_expired');
  }
}
