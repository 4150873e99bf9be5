/**
 * The people a dataset is shared with (decision 0028): listed by anyone who holds a place in it, added, moved
 * and removed by those who maintain it (its owner, maintainers, administrators); any member may leave. A
 * removal takes effect at once everywhere: every read, credential and grant asks `standingOf` again.
 */
import { audit, type Actor } from '../accounts/admin-users.js';
import { findUserByUsername } from '../accounts/users.js';
import type { User } from '../db/accounts-tables.js';
import type { MemberRole } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { isNdsError, NdsError } from '../core/errors.js';
import { spendAll } from '../core/rate-limiter.js';
import { datasetFor, datasetForWhile } from './dataset-access.js';
import type { DatasetLimits } from './dataset-limits.js';
import { deleteMember, listMembers, upsertMember, type MemberListing } from './dataset-members-queries.js';
import { memberAddedMail } from './member-mails.js';

export const MEMBER_ROLES: readonly MemberRole[] = ['reader', 'annotator', 'maintainer'];

export interface PresentedMember {
  username: string;
  role: MemberRole;
  added_by: string | null;
  added_at: string;
  updated_at: string;
}

export function presentMember(m: MemberListing): PresentedMember {
  return { username: m.username, role: m.role, added_by: m.added_by_username, added_at: new Date(m.created_at).toISOString(), updated_at: new Date(m.updated_at).toISOString() };
}

/** The members, by username. Anyone with a place in the dataset lists them; a reader of a public dataset gets 403. */
export async function datasetMembers(deps: Pick<Deps, 'db'>, user: User | undefined, id: string): Promise<{ owner: string; members: PresentedMember[] }> {
  const { dataset, standing } = await datasetFor(deps.db, id, user, 'read');
  if (standing === 'public') throw new NdsError('forbidden', { message: `Only the owner, members and administrators list the members of ${id}.` });
  return { owner: dataset.owner_username, members: (await listMembers(deps.db, id)).map(presentMember) };
}

async function memberAccount(deps: Pick<Deps, 'db'>, username: string): Promise<User> {
  const user = await findUserByUsername(deps.db, username);
  if (!user) throw new NdsError('user_not_found', { message: `No account ${username}.` });
  return user;
}

type MemberMailDeps = Pick<Deps, 'log'> & { datasetLimits: Pick<DatasetLimits, 'memberMailsPerRecipient' | 'memberMailsPerActor'> };

/**
 * Whether a member-added mail may go to `person`: one point of its recipient's limit and of its actor's
 * (`dataset-limits.ts`), or neither. Adding, removing and adding someone again in a loop mails them a few
 * times an hour, not once a request; past a limit the addition stands, unmailed.
 */
async function mayMailNewMember(deps: MemberMailDeps, actor: Actor, person: User, datasetId: string): Promise<boolean> {
  const { memberMailsPerRecipient, memberMailsPerActor } = deps.datasetLimits;
  try {
    await spendAll([[memberMailsPerRecipient, String(person.id)], [memberMailsPerActor, String(actor.user.id)]]);
    return true;
  } catch (err) {
    if (!isNdsError(err, 'rate_limited')) throw err;
    deps.log.info({ dataset: datasetId, member: person.username, by: actor.user.username }, 'member-added mail not sent: past its rate limit');
    return false;
  }
}

/**
 * Adds `username` with `role`, or changes their role (maintainers, the owner, administrators). A new member is
 * told by mail, within the limits of `mayMailNewMember`. The owner holds the dataset already and is never a member.
 */
export async function setMember(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'mailer' | 'log' | 'hooks'> & MemberMailDeps,
  actor: Actor,
  id: string,
  username: string,
  role: MemberRole,
): Promise<{ member: PresentedMember; created: boolean }> {
  // The actor's right is asked under the lock its write holds: a removal of the actor waits, or is seen.
  const { dataset, person, created } = await deps.db.transaction().execute(async (trx) => {
    const { dataset } = await datasetForWhile(trx, id, actor.user, 'maintain', 'change');
    const person = await memberAccount({ db: trx }, username);
    if (person.id === dataset.owner_id) throw new NdsError('conflict', { message: `${username} owns ${id}; the owner is not a member.` });
    const { created } = await upsertMember(trx, { datasetId: id, userId: person.id, role, addedBy: actor.user.id }, deps.clock.now());
    await audit(trx, actor, created ? 'dataset.member_added' : 'dataset.member_changed', id, { username, role });
    return { dataset, person, created };
  });
  await membersChanged(deps, id);
  // Posted, not awaited: whether the mail limits let this mail go (decision 0061) must not show in the answer's time.
  if (created && (await mayMailNewMember(deps, actor, person, id))) deps.mailer.post(memberAddedMail(deps.config.publicUrl, person.email, { datasetId: id, datasetName: dataset.name, role, addedBy: actor.user.username }));
  // The listing leaves out some accounts (and a request at the same moment may remove the member): then the
  // answer is what this request wrote, never a crash (the HTTP fuzz found one, seed 1350512580).
  const listed = (await listMembers(deps.db, id)).find((m) => m.user_id === person.id);
  const at = deps.clock.now().toISOString();
  const member = listed ? presentMember(listed) : { username: person.username, role, added_by: actor.user.username, added_at: at, updated_at: at };
  return { member, created };
}

/**
 * Removes `username` (maintainers, the owner, administrators; or the member themselves, leaving). A stranger
 * to a private dataset gets the unknown-id answer; a reader of it removing someone else 403; removing
 * someone who is no member, 404.
 */
export async function removeMember(deps: Pick<Deps, 'db' | 'hooks'>, actor: Actor, id: string, username: string): Promise<void> {
  const leaving = actor.user.username === username;
  await deps.db.transaction().execute(async (trx) => {
    const { standing } = await datasetForWhile(trx, id, actor.user, leaving ? 'read' : 'maintain', 'change');
    const person = await memberAccount({ db: trx }, username);
    if (!(await deleteMember(trx, id, person.id))) {
      throw new NdsError('not_found', { message: leaving && standing === 'public' ? `You are no member of ${id}.` : `${username} is no member of ${id}.` });
    }
    await audit(trx, actor, leaving ? 'dataset.member_left' : 'dataset.member_removed', id, { username });
  });
  await membersChanged(deps, id);
}

/** Runs the `datasetMembersChanged` hooks: each forgets what it remembered of the dataset's readers. */
async function membersChanged(deps: Pick<Deps, 'hooks'>, id: string): Promise<void> {
  for (const forget of deps.hooks.datasetMembersChanged) await forget(id);
}
