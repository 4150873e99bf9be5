/** Naive (zone-less) ISO date-times: the formats record local clock time without a zone, and so do we. */

/** Adds seconds (may be fractional or negative) to `YYYY-MM-DDThh:mm:ss[.ffffff]`, keeping microseconds. */
export function addSeconds(naive: string, seconds: number): string {
  if (seconds === 0) return naive;
  const ms = Date.parse(`${naive.slice(0, 19)}Z`);
  const frac = naive.length > 20 ? Number(`0.${naive.slice(20)}`) : 0;
  const totalMicros = Math.round((ms / 1000 + frac + seconds) * 1e6);
  return fromMicros(totalMicros);
}

function fromMicros(totalMicros: number): string {
  const wholeMs = Math.floor(totalMicros / 1000);
  const micros = totalMicros - Math.floor(totalMicros / 1e6) * 1e6;
  const text = new Date(wholeMs).toISOString().slice(0, 19);
  return micros === 0 ? text : `${text}.${String(micros).padStart(6, '0')}`;
}

/** Snaps a rate computed from a ratio (e.g. 1000 samples / 0.5000001 s) to a whole number when it is one. */
export function snapRate(rate: number): number {
  const whole = Math.round(rate);
  if (whole > 0 && Math.abs(rate - whole) <= 1e-6 * rate) return whole;
  return Number(rate.toPrecision(12));
}
