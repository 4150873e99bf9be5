/**
 * The service credential a conversion worker fetches a hosted repository with (decision 0026): workers share
 * no disk with the node that holds the repository, so they clone it over HTTP like anyone else, with this in
 * place of an API key. It is signed, never stored: an HMAC with the object signing secret (the secret every
 * node of a service shares) over a label of its own, the dataset id and the expiry, five minutes ahead.
 *
 * It reads one dataset's repository over git smart HTTP (upload-pack) and nothing else: no push, no git-lfs
 * batch, no API route (those look keys up by hash and know no such token), no other dataset. The label keeps
 * its MAC apart from every other one made with the same secret (read grants, object URLs).
 */
import type { Config } from '../core/config.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import { sameText } from '../objects/object-url-signer.js';
import { DATASET_ID } from './dataset-access.js';

/** How long a credential reads: a clone or fetch starts well within it (git asks again for each request). */
export const GIT_FETCH_CREDENTIAL_SECONDS = 300;
/** A credential that claims to live longer than this was not made here (clocks of nodes may differ a little). */
const LONGEST_SECONDS = GIT_FETCH_CREDENTIAL_SECONDS + 60;

const PREFIX = 'ndsfetch';

type SigningConfig = Pick<Config, 'dataDir' | 'objectSigningSecret'>;

function signature(config: SigningConfig, datasetId: string, expires: number): string {
  return objectUrlSigner({ dataDir: config.dataDir, objectSigningSecret: config.objectSigningSecret }).mac(['git-fetch', datasetId, expires].join('\n'));
}

/** A credential reading `datasetId`'s hosted repository until five minutes after `now`. */
export function signGitFetchCredential(config: SigningConfig, datasetId: string, now: Date): string {
  const expires = Math.floor(now.getTime() / 1000) + GIT_FETCH_CREDENTIAL_SECONDS;
  return [PREFIX, datasetId, expires, signature(config, datasetId, expires)].join('.');
}

/** Whether `token` looks like a fetch credential at all (so that it is never looked up as an API key). */
export function isGitFetchCredential(token: string): boolean {
  return token.startsWith(`${PREFIX}.`);
}

/**
 * True when `token` is a credential this service signed for `datasetId` and it is still valid at `now`. Every
 * check runs whatever the token, and the signature is compared in constant time.
 */
export function gitFetchCredentialReads(config: SigningConfig, token: string, datasetId: string, now: Date): boolean {
  const parts = token.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX) return false;
  const [, id, expiresText, sig] = parts as [string, string, string, string];
  if (!DATASET_ID.test(id) || !/^\d{1,12}$/.test(expiresText)) return false;
  const expires = Number(expiresText);
  const signed = sameText(signature(config, id, expires), sig);
  const seconds = expires - now.getTime() / 1000;
  return signed && id === datasetId && seconds > 0 && seconds <= LONGEST_SECONDS;
}
