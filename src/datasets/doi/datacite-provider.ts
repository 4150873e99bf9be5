/**
 * DataCite's REST API (https://support.datacite.org/docs/api-create-dois): JSON:API documents,
 * `POST /dois` to create, `PUT /dois/:doi` to update, `DELETE /dois/:doi` to delete a draft, HTTP Basic with the
 * repository id and password.
 */
import type { Config } from '../../core/config.js';
import { NdsError } from '../../core/errors.js';
import type { DoiAttributes } from './doi-metadata.js';
import type { DoiEvent, DoiProvider, MintOutcome } from './doi-provider.js';

const TIMEOUT_MS = 20_000;

export class DataciteProvider implements DoiProvider {
  readonly name = 'datacite';
  readonly test = false;
  readonly prefix: string;
  readonly #settings: NonNullable<Config['datacite']>;

  constructor(settings: NonNullable<Config['datacite']>) {
    this.#settings = settings;
    this.prefix = settings.prefix;
  }

  async mint(doi: string, attributes: DoiAttributes, event?: DoiEvent): Promise<MintOutcome> {
    const res = await this.#send('POST', '/dois', doi, attributes, event);
    // 422 "This DOI has already been taken". DOI names ignore case, so this may be another version's DOI or
    // another service's under a shared prefix: never updated from here.
    if (res.status === 422 && /taken/i.test(await res.clone().text())) return 'taken';
    await this.#check(res, `register ${doi}`);
    return 'created';
  }

  async update(doi: string, attributes: DoiAttributes, event?: DoiEvent): Promise<void> {
    const res = await this.#send('PUT', `/dois/${encodeURIComponent(doi)}`, doi, attributes, event);
    await this.#check(res, `update ${doi}`);
  }

  async deleteDraft(doi: string): Promise<void> {
    const res = await this.#request('DELETE', `/dois/${encodeURIComponent(doi)}`);
    // DataCite answers 204 for a deleted draft, 404 for a name it does not hold, and 405 for a registered or
    // findable DOI, which it never deletes (https://support.datacite.org/docs/doi-states).
    if (res.status === 404 || res.status === 405) await res.body?.cancel();
    if (res.status === 404) return;
    if (res.status === 405) throw new NdsError('conflict', { message: `${doi} is registered or findable at DataCite, not a draft; it was not deleted.` });
    await this.#check(res, `delete the draft ${doi}`);
  }

  #send(method: string, path: string, doi: string, attributes: DoiAttributes, event: DoiEvent | undefined): Promise<Response> {
    return this.#request(method, path, { data: { type: 'dois', id: doi, attributes: { doi, ...attributes, ...(event && { event }) } } });
  }

  async #request(method: string, path: string, body?: unknown): Promise<Response> {
    const { url, repositoryId, password } = this.#settings;
    try {
      return await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/vnd.api+json' }),
          accept: 'application/vnd.api+json',
          authorization: `Basic ${Buffer.from(`${repositoryId}:${password}`).toString('base64')}`,
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new NdsError('upstream_failed', { message: `DataCite could not be reached: ${(err as Error).message}`, cause: err });
    }
  }

  async #check(res: Response, what: string): Promise<void> {
    if (res.ok) return;
    const text = await res.text().catch(() => '');
    let details: string[] = [];
    try {
      const parsed = JSON.parse(text) as { errors?: Array<{ title?: string; source?: string }> };
      details = (parsed.errors ?? []).map((e) => [e.source, e.title].filter(Boolean).join(': '));
    } catch {
      if (text) details = [text.slice(0, 200)];
    }
    throw new NdsError('upstream_failed', { message: `DataCite refused to ${what} (HTTP ${res.status}).`, details });
  }
}
