/**
 * What a dataset's `source_repo` may be, and where the server may fetch it from. Either the dataset's own
 * hosted repository (stored as the marker `hosted`: the row's id, never a path, says which repository), or
 * an `https` URL on a host of `SOURCE_REPO_HOSTS` whose addresses are public (or inside
 * `SOURCE_REPO_ALLOW_PRIVATE`). Never a server path, a `file://` URL or another dataset's repository.
 * The rules are checked when a client sets the field and again before each fetch, on the addresses the
 * host resolves to then; the fetch is pinned to the address checked (`pinnedFetch`).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../core/config.js';
import { addressMatcher, isPublicAddress } from '../core/ip-addresses.js';
import { NdsError } from '../core/errors.js';

/** `source_repo` of a dataset whose repository is its own hosted one (`<PUBLIC_URL>/git/<id>.git`). */
export const HOSTED_SOURCE = 'hosted';

export type SourceRepoSettings = Pick<Config, 'publicUrl' | 'sourceRepoHosts' | 'sourceRepoAllowPrivate'>;

/** What a `source_repo` names: the dataset's hosted repository, a URL to fetch, or nothing it may name (with why). */
export type SourceRepo = { kind: 'hosted' } | { kind: 'remote'; url: URL } | { kind: 'refused'; reason: string };

/** Resolves a host name to its addresses (`dns.lookup` with `all`); tests pass their own. */
export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The host of a URL as an address or a name: lower case, IPv6 without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

/**
 * Pure: what `value` names for dataset `datasetId` (undefined while the dataset is being created). Rows
 * written before these rules (a server path, another dataset's repository) come back `refused`.
 */
export function classifySourceRepo(value: string, datasetId: string | undefined, settings: SourceRepoSettings): SourceRepo {
  const given = value.trim();
  if (given === HOSTED_SOURCE) return { kind: 'hosted' };
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    const path = given.startsWith('/') || given.startsWith('.') || given.startsWith('~') || /^[A-Za-z]:\\/.test(given);
    return { kind: 'refused', reason: path ? 'a path is not a source repository: give the https URL of a git repository' : 'not a URL: give the https URL of a git repository' };
  }
  if (url.protocol === 'file:') return { kind: 'refused', reason: 'a file:// URL is not a source repository: give the https URL of a git repository' };
  // This server's repositories, at <PUBLIC_URL>/git/<id>.git: the dataset's own is the marker, any other is refused.
  const own = new URL(settings.publicUrl);
  const gitRoot = `${own.pathname.replace(/\/+$/, '')}/git/`;
  if (hostOf(url) === hostOf(own) && url.pathname.startsWith(gitRoot)) {
    const ownUrl = datasetId === undefined ? undefined : `${settings.publicUrl}/git/${datasetId}.git`;
    const plain = !url.username && !url.password && !url.search && !url.hash;
    if (datasetId !== undefined && plain && url.origin === own.origin && url.pathname.replace(/\/+$/, '') === `${gitRoot}${datasetId}.git`) return { kind: 'hosted' };
    const hint = ownUrl ? `; its own is ${ownUrl}` : '; a new dataset gets its own on the first push';
    return { kind: 'refused', reason: `names a repository of this server that is not the dataset's own${hint}` };
  }
  if (url.protocol !== 'https:') return { kind: 'refused', reason: `only https URLs are fetched, not ${url.protocol.replace(/:$/, '')}` };
  if (url.username || url.password) return { kind: 'refused', reason: 'the URL must not carry a user name or password: the repository must be readable without them' };
  if (url.search || url.hash) return { kind: 'refused', reason: 'the URL must not carry a query or a fragment' };
  if (url.pathname === '/' || url.pathname === '') return { kind: 'refused', reason: 'the URL names no repository (give https://<host>/<owner>/<name>)' };
  const host = hostOf(url);
  if (!settings.sourceRepoHosts.includes(host)) {
    return { kind: 'refused', reason: `${host} is not a host this server fetches repositories from (${settings.sourceRepoHosts.join(', ') || 'none'})` };
  }
  if (isIP(host) && !addressAllowed(host, settings)) return { kind: 'refused', reason: `${host} is not a public address` };
  return { kind: 'remote', url };
}

function addressAllowed(address: string, settings: SourceRepoSettings): boolean {
  return isPublicAddress(address) || addressMatcher(settings.sourceRepoAllowPrivate)(address);
}

/** The address a remote source is fetched from, checked; or why it may not be fetched. */
export type ResolvedSource = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string; unresolved: boolean };

/**
 * Resolves a remote source's host and checks every address it gives (one private address is enough to
 * refuse: a resolver may hand out either). Nothing connects to the host here.
 */
export async function resolveSource(url: URL, settings: SourceRepoSettings, lookup: HostLookup = systemLookup): Promise<ResolvedSource> {
  const host = hostOf(url);
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host);
  } catch (err) {
    return { ok: false, reason: `${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`, unresolved: true };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} could not be resolved (no address)`, unresolved: true };
  const refused = addresses.find((a) => !addressAllowed(a.address, settings));
  if (refused) return { ok: false, reason: `${host} resolves to ${refused.address}, which is not a public address`, unresolved: false };
  const first = addresses[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * The git settings of a fetch from `url` pinned to `address`: curl connects there and nowhere else, whatever
 * DNS answers by then (rebinding), and follows no redirect (which could lead to another host).
 */
export function pinnedFetch(url: URL, address: string): Record<string, string> {
  const port = url.port || '443';
  const pinned = isIP(address) === 6 ? `[${address}]` : address;
  return { 'http.followRedirects': 'false', 'http.curloptResolve': `${hostOf(url)}:${port}:${pinned}` };
}

/**
 * Checks a `source_repo` a client sets (creation, PATCH) and returns the value to store: the marker for the
 * dataset's own repository, else the URL as given. A host that resolves to a private address is refused now;
 * one that does not resolve at all is accepted (DNS may be down for a moment), and checked again at each fetch.
 */
export async function sourceRepoToStore(value: string, datasetId: string | undefined, settings: SourceRepoSettings, lookup: HostLookup = systemLookup): Promise<string> {
  const source = classifySourceRepo(value, datasetId, settings);
  if (source.kind === 'hosted') return HOSTED_SOURCE;
  if (source.kind === 'refused') throw refusal(value, source.reason);
  const resolved = await resolveSource(source.url, settings, lookup);
  if (!resolved.ok && !resolved.unresolved) throw refusal(value, resolved.reason);
  return value.trim();
}

function refusal(value: string, reason: string): NdsError {
  const message = `source_repo ${JSON.stringify(value.slice(0, 200))} is refused: ${reason}.`;
  return new NdsError('validation_failed', { message, details: [`source_repo: ${reason}`] });
}
