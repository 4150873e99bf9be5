/**
 * Pure parts of dataset search: turning what a person typed into tsquery terms, with recording facts
 * normalized the way the index stores them ("500 Hz", "500hz" → `500hz`; "64 channels" → `64ch`).
 */

/** Sampling rates are indexed as `<rate>hz`, a fraction's point written as p (`12p8hz`). */
export function rateToken(rate: number): string {
  return `${String(rate).replace('.', 'p')}hz`;
}

/** Lower-cases and rewrites rates and channel counts into the tokens of the index. */
export function normalizeQuery(q: string): string {
  return q
    .toLowerCase()
    .replace(/(\d+(?:[.,]\d+)?)\s*khz\b/g, (_, n: string) => rateToken(Number(n.replace(',', '.')) * 1000))
    .replace(/(\d+(?:[.,]\d+)?)\s*(?:hz|hertz)\b/g, (_, n: string) => rateToken(Number(n.replace(',', '.'))))
    .replace(/(\d+)\s*(?:channels?|chans?|ch)\b/g, '$1ch');
}

/**
 * The words of a query as tsquery terms (letters and digits only, so no tsquery syntax gets through),
 * each a prefix match, all required. Empty when the query has no words.
 */
export function tsqueryText(q: string): string {
  const words = normalizeQuery(q).match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, 32).map((w) => `${w}:*`).join(' & ');
}
