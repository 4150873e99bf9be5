/**
 * Content negotiation between the HTML pages and the JSON API on the same paths (RFC 9110 section 12.5.1), decided
 * here and nowhere else: `mountRoutes` asks `wantsPage` when a path has both a page and an API answer. Pure.
 */

/** The q-value `accept` gives `type` (`text/html`), through an exact, `type/*` or `*\/*` range; 0 when none. */
export function acceptQuality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let quality = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity <= best) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    best = specificity;
    quality = q ? Number(q.slice(2)) || 0 : 1;
  }
  return quality;
}

/** True only when the client ranks HTML strictly above JSON: a browser, never `*\/*` or an API client. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return acceptQuality(accept, 'text/html') > acceptQuality(accept, 'application/json');
}

/**
 * Whether a request gets the page rather than the JSON: the client ranks HTML above JSON, or it names HTML
 * at all and sends no API key (a browser following a link; API clients send `application/json` or nothing).
 */
export function wantsPage(accept: string | undefined, hasAuthorization: boolean): boolean {
  return prefersHtml(accept) || (!hasAuthorization && (accept ?? '').toLowerCase().includes('text/html'));
}
