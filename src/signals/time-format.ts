/**
 * One time format everywhere (axis, status, cursor readout, event list, jump box), chosen by the user:
 * seconds from the start (`s`), h:mm:ss from the start (`hms`), or the clock time of the recording
 * (`clock`, from its start time as recorded, without time-zone conversion). Pure.
 */

export type TimeFormat = 's' | 'hms' | 'clock';
export const timeFormats: readonly TimeFormat[] = ['s', 'hms', 'clock'];

/** Milliseconds since the epoch of the recording's start wall-clock time read as UTC; undefined when unknown. */
export function recordingEpoch(startTime: unknown): number | undefined {
  if (typeof startTime !== 'string') return undefined;
  const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?/.exec(startTime);
  if (!m) return undefined;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) + Math.round(Number(m[7] ?? 0) * 1000);
}

/** Decimals that resolve `step` seconds (0 to 6). */
export function decimalsFor(step: number): number {
  return Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
}

function hms(totalSeconds: number, decimals: number): string {
  const sign = totalSeconds < 0 ? '-' : '';
  const t = Math.abs(totalSeconds);
  const scaled = Math.round(t * 10 ** decimals) / 10 ** decimals;
  const h = Math.floor(scaled / 3600);
  const m = Math.floor((scaled % 3600) / 60);
  const s = scaled - h * 3600 - m * 60;
  const sText = s.toFixed(decimals).padStart(decimals > 0 ? decimals + 3 : 2, '0');
  return `${sign}${h}:${String(m).padStart(2, '0')}:${sText}`;
}

/**
 * `seconds` from the recording's start in `format`, with enough decimals for `resolution` seconds. The clock
 * format falls back to h:mm:ss from the start when the start time is unknown.
 */
export function formatTime(seconds: number, format: TimeFormat, resolution: number, epoch?: number): string {
  const decimals = decimalsFor(resolution);
  if (format === 's') return `${seconds.toFixed(decimals)} s`;
  if (format === 'clock' && epoch !== undefined) {
    const ms = epoch + seconds * 1000;
    const ofDay = (((ms / 1000) % 86400) + 86400) % 86400;
    return hms(ofDay, decimals);
  }
  return hms(seconds, decimals);
}

/**
 * A time typed into the jump box, in seconds from the start: `123.4` or `123.4 s` (seconds), `1:02:03.5` or
 * `2:03` (h:mm:ss or m:ss from the start; in the clock format, a clock time on the recording's first day or
 * the next). Undefined when it does not parse.
 */
export function parseTime(text: string, format: TimeFormat, epoch?: number): number | undefined {
  const t = text.trim().replace(/\s*s$/, '');
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/.exec(t);
  if (!m) return undefined;
  const seconds = Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  if (format !== 'clock' || epoch === undefined || m[1] === undefined) return seconds;
  const startOfDay = (((epoch / 1000) % 86400) + 86400) % 86400;
  let offset = seconds - startOfDay;
  if (offset < 0) offset += 86400;
  return offset;
}
