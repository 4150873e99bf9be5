/**
 * Gateway reads of a private dataset: every request carries the page's read grant as
 * `Authorization: Bearer <grant>`, and the grant is renewed (POST to the dataset's read-grant route, with
 * this browser's session) a minute before it expires, or once when the gateway answers 404 to an old one
 * (a laptop that slept past the expiry).
 */

export interface ReadGrantConfig {
  grant: string;
  /** Seconds the grant is valid from when the page was made (the browser's clock may differ from the server's). */
  expires_in: number;
  /** Where a fresh grant is asked for: `/datasets/<id>/read-grant`. */
  refresh: string;
}

const RENEW_BEFORE_MS = 60_000;

export function readGrantFetch(config: ReadGrantConfig): (request: Request) => Promise<Response> {
  let grant = config.grant;
  let issuedAt = Date.now();
  let expiresAt = issuedAt + config.expires_in * 1000;
  let renewing: Promise<void> | undefined;

  function renew(): Promise<void> {
    renewing ??= fetch(config.refresh, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(async (r) => {
        if (!r.ok) throw new Error(`could not renew the read grant (HTTP ${r.status})`);
        const answer = (await r.json()) as { grant: string; expires_in?: number; expires_at: string };
        grant = answer.grant;
        issuedAt = Date.now();
        expiresAt = issuedAt + (answer.expires_in ?? 300) * 1000;
      })
      .finally(() => {
        renewing = undefined;
      });
    return renewing;
  }

  const send = (request: Request) => {
    const headers = new Headers(request.headers);
    headers.set('authorization', `Bearer ${grant}`);
    return fetch(new Request(request, { headers }));
  };

  return async (request: Request) => {
    if (expiresAt - Date.now() < RENEW_BEFORE_MS) await renew();
    const retry = request.clone();
    const response = await send(request);
    if (response.status !== 404 || Date.now() - issuedAt < 30_000) return response;
    await renew();
    return send(retry);
  };
}
