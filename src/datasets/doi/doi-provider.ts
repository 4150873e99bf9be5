/**
 * Where DOIs are registered: DataCite's REST API when `DATACITE_*` is configured, otherwise a built-in test
 * provider that only records DOIs under the test prefix 10.5072 (never resolvable, clearly marked `test`).
 */
import type { DoiAttributes } from './doi-metadata.js';

/**
 * DataCite's state events (https://support.datacite.org/reference/dois-2): `publish` makes a DOI findable;
 * `register` registers it without listing it (a private dataset). Sent without an event, a new DOI is a draft:
 * it resolves nowhere and may still be deleted, which is how an approval holds its DOIs until it commits.
 */
export type DoiEvent = 'publish' | 'register';

/** What a registration found: `created` a new DOI, or the name `taken` already (by nds or by anyone else). */
export type MintOutcome = 'created' | 'taken';

export interface DoiProvider {
  readonly name: 'datacite' | 'test';
  /** True when the DOIs are test DOIs that resolve nowhere. */
  readonly test: boolean;
  readonly prefix: string;
  /**
   * Registers `doi` with its metadata, a draft when `event` is left out. A name that exists already is left as
   * it is and answers `taken`: only the caller knows whether that DOI is its own to update. Throws `upstream_failed`.
   */
  mint(doi: string, attributes: DoiAttributes, event?: DoiEvent): Promise<MintOutcome>;
  /** Replaces the metadata of a registered DOI. Throws `upstream_failed`. */
  update(doi: string, attributes: DoiAttributes, event?: DoiEvent): Promise<void>;
  /**
   * Deletes `doi` if it is a draft; resolves too when the provider holds no such name. DataCite never deletes a
   * registered or findable DOI (`conflict`: it stays as it is), and never gives a deleted name out again, so call it
   * only for a name nds will not ask for again. Throws `upstream_failed` when the provider could not be asked.
   */
  deleteDraft(doi: string): Promise<void>;
}

/** The built-in provider: DOIs live only in nds's own `doi_records`. */
export class TestDoiProvider implements DoiProvider {
  readonly name = 'test';
  readonly test = true;
  readonly prefix = '10.5072';
  async mint(): Promise<MintOutcome> {
    return 'created';
  }
  async update(): Promise<void> {}
  async deleteDraft(): Promise<void> {}
}

/** DOI names nds gives out: `<prefix>/nds.<id>` (concept) and `<prefix>/nds.<id>.v<version>`. */
export function conceptDoi(prefix: string, datasetId: string): string {
  return `${prefix}/nds.${datasetId}`;
}

export function versionDoi(prefix: string, datasetId: string, version: string): string {
  return `${prefix}/nds.${datasetId}.v${version}`;
}
