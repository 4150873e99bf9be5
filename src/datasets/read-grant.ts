/**
 * Read grants: short-lived tokens that let a browser read a dataset's Zarr copy through the gateway or
 * `/objects/` (the owner's and admins' private previews). A grant is signed, never stored: an HMAC with the
 * server's object signing secret over the dataset id, the expiry and the holder: the account it was issued to
 * and the key or session that asked (`<id>~<sign-in>`), or `-` when issued to someone not signed in, for a
 * public dataset.
 *
 * A grant reads its dataset only while that account may read it through that sign-in (`dataset-access.ts`
 * `mayStillRead`, asked at every use): a grant a stranger got while the dataset was public reads nothing once
 * it is private, no grant reads a deleted dataset, an owner or admin who loses access loses their grants with
 * it, and a deleted key or an ended session takes its grants along.
 */
import { isSignIn, type SignIn } from '../accounts/sign-in-of-credential.js';
import type { User } from '../db/accounts-tables.js';
import type { Config } from '../core/config.js';
import type { Deps } from '../deps.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { sameText } from '../objects/object-url-signer.js';
import { DATASET_ID, mayStillRead, visibleDataset } from './dataset-access.js';

/** How long a grant reads: long enough for a viewing session's refresh cycle, short enough to leak little. */
export const READ_GRANT_SECONDS = 600;

const PREFIX = 'ndsg';

export interface ReadGrant {
  grant: string;
  expiresAt: Date;
}

/** What a valid grant says: which dataset, and for whom (null: anyone), under which sign-in. */
export interface ReadGrantClaims {
  datasetId: string;
  user: number | null;
  signIn?: SignIn;
}

type SigningConfig = Pick<Config, 'dataDir' | 'objectSigningSecret'>;

function signature(config: SigningConfig, datasetId: string, expires: number, holder: string): string {
  return objectUrlSigner({ dataDir: config.dataDir, objectSigningSecret: config.objectSigningSecret }).mac(['read-grant', datasetId, expires, holder].join('\n'));
}

/**
 * The grant of `datasetId` for account `userId` (null: anyone) under `signIn`, as of `now` (pure apart from
 * the secret).
 */
export function signReadGrant(config: SigningConfig, datasetId: string, userId: number | null, now: Date, signIn?: SignIn): ReadGrant {
  const expires = Math.floor(now.getTime() / 1000) + READ_GRANT_SECONDS;
  const holder = userId === null ? '-' : signIn === undefined ? String(userId) : `${userId}~${signIn}`;
  return { grant: [PREFIX, datasetId, expires, holder, signature(config, datasetId, expires, holder)].join('.'), expiresAt: new Date(expires * 1000) };
}

/**
 * A grant for `user` to read dataset `id`: anyone who may see the dataset gets one; anyone else gets
 * `dataset_not_found`, as for an unknown id.
 */
export async function issueReadGrant(deps: Pick<Deps, 'db' | 'config' | 'clock'>, id: string, user: User | undefined, signIn?: SignIn): Promise<ReadGrant> {
  const dataset = await visibleDataset(deps.db, id, user);
  return signReadGrant(deps.config, dataset.id, user?.id ?? null, deps.clock.now(), user && signIn);
}

/**
 * The claims of `token` when it is a grant this server signed and it has not expired; undefined otherwise.
 * Every check runs whatever the token, and the signature is compared in constant time. Whether the grant
 * still reads is the caller's question to `mayStillRead`, with these claims.
 */
export function readGrantClaims(config: SigningConfig, token: string, now: Date): ReadGrantClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 5 || parts[0] !== PREFIX) return undefined;
  const [, id, expiresText, holder, sig] = parts as [string, string, string, string, string];
  const held = /^(?:-|([1-9]\d{0,15})(?:~(.+))?)$/.exec(holder);
  if (!DATASET_ID.test(id) || !/^\d{1,12}$/.test(expiresText) || !held || (held[2] !== undefined && !isSignIn(held[2]))) return undefined;
  const expires = Number(expiresText);
  const signed = sameText(signature(config, id, expires, holder), sig);
  if (!signed || expires * 1000 <= now.getTime()) return undefined;
  return { datasetId: id, user: held[1] === undefined ? null : Number(held[1]), ...(held[2] === undefined ? {} : { signIn: held[2] }) };
}

/**
 * True when `token` is a valid grant of `datasetId` whose account may still read it (`mayStillRead`): a grant
 * outlives neither the dataset's publicity, nor its existence, nor its holder's access. Any other token reads
 * as no grant at all.
 */
export async function grantReadsDataset(deps: Pick<Deps, 'config' | 'db' | 'clock'>, token: string, datasetId: string): Promise<boolean> {
  const claims = readGrantClaims(deps.config, token, deps.clock.now());
  return !!claims && claims.datasetId === datasetId && (await mayStillRead(deps.db, datasetId, claims.user, claims.signIn, deps.clock.now()));
}

/** The bearer token of an `Authorization` header when it looks like a read grant; undefined otherwise. */
export function readGrantOf(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer\s+(ndsg\.\S+)\s*$/i.exec(authorization);
  return m?.[1];
}
