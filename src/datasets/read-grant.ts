/**
 * Read grants: short-lived tokens that let a browser read a private dataset's Zarr copy through the gateway
 * (the owner's and admins' private previews). A grant is signed, never stored: an HMAC with the server's
 * object signing secret over the dataset id, the expiry and the dataset's visibility when it was issued.
 *
 * A grant issued for a private dataset (only its owner and admins can get one) reads it while it exists.
 * A grant issued while the dataset was public names `public`, and the gateway honours only `private`
 * grants: so a stranger's grant for a public dataset reads nothing once the dataset is made private, and no
 * grant reads a deleted dataset (the gateway checks the dataset's current state on every read).
 */
import type { User } from '../db/accounts-tables.js';
import type { Config } from '../core/config.js';
import type { Deps } from '../deps.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { sameText } from '../objects/object-url-signer.js';
import { visibleDataset } from './dataset-access.js';
import { DATASET_ID } from './dataset-access.js';
import { datasetVisibility } from './dataset-queries.js';

/** How long a grant reads: long enough for a viewing session's refresh cycle, short enough to leak little. */
export const READ_GRANT_SECONDS = 600;

const PREFIX = 'ndsg';

export interface ReadGrant {
  grant: string;
  expiresAt: Date;
}

type Scope = 'private' | 'public';

type SigningConfig = Pick<Config, 'dataDir' | 'objectSigningSecret'>;

function signature(config: SigningConfig, datasetId: string, expires: number, scope: Scope): string {
  return objectUrlSigner({ dataDir: config.dataDir, objectSigningSecret: config.objectSigningSecret }).mac(['read-grant', datasetId, expires, scope].join('\n'));
}

/** The grant of `datasetId`, as of `now`, for a dataset of this visibility (pure apart from the secret). */
export function signReadGrant(config: SigningConfig, datasetId: string, visibility: 'public' | 'private', now: Date): ReadGrant {
  const expires = Math.floor(now.getTime() / 1000) + READ_GRANT_SECONDS;
  const scope: Scope = visibility;
  return { grant: [PREFIX, datasetId, expires, scope, signature(config, datasetId, expires, scope)].join('.'), expiresAt: new Date(expires * 1000) };
}

/**
 * A grant for `user` to read dataset `id`: anyone who may see the dataset gets one; anyone else gets
 * `dataset_not_found`, as for an unknown id.
 */
export async function issueReadGrant(deps: Pick<Deps, 'db' | 'config' | 'clock'>, id: string, user: User | undefined): Promise<ReadGrant> {
  const dataset = await visibleDataset(deps.db, id, user);
  return signReadGrant(deps.config, dataset.id, dataset.visibility, deps.clock.now());
}

/**
 * True when `token` is a valid, unexpired grant of `datasetId` that reads it while private. Every check
 * runs whatever the token, and the signature is compared in constant time.
 */
export function grantReadsPrivate(config: SigningConfig, token: string, datasetId: string, now: Date): boolean {
  const parts = token.split('.');
  if (parts.length !== 5 || parts[0] !== PREFIX) return false;
  const [, id, expiresText, scope, sig] = parts as [string, string, string, string, string];
  if (!DATASET_ID.test(id) || !/^\d{1,12}$/.test(expiresText) || (scope !== 'private' && scope !== 'public')) return false;
  const expires = Number(expiresText);
  const signed = sameText(signature(config, id, expires, scope), sig);
  return signed && id === datasetId && scope === 'private' && expires * 1000 > now.getTime();
}

/**
 * True when `token` is a grant that reads `datasetId` now (`grantReadsPrivate`) and the dataset still exists: a
 * deletion is never outlived by a grant. Any other token reads as no grant at all.
 */
export async function grantReadsDataset(deps: Pick<Deps, 'config' | 'db' | 'clock'>, token: string, datasetId: string): Promise<boolean> {
  return grantReadsPrivate(deps.config, token, datasetId, deps.clock.now()) && (await datasetVisibility(deps.db, datasetId)) !== undefined;
}

/** The bearer token of an `Authorization` header when it looks like a read grant; undefined otherwise. */
export function readGrantOf(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer\s+(ndsg\.\S+)\s*$/i.exec(authorization);
  return m?.[1];
}
