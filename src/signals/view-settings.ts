/**
 * Everything that makes a view, and its form in the address, so a link opens the same view: `t` (window
 * start, s), `span` (s on screen), `ch` (labels shown, in order), `scale` (`eeg:50,eog:100` µV per division,
 * or `auto`), `hp`, `lp` (Hz), `notch` (50 or 60), `ref` (`avg`, a label, `A1+A2`, `bipolar:Fp1-F7,…`),
 * `level` (only when forced), `rows` (rows per page), `time` (`s`, `hms`, `clock`), `bad=hide`. Pure.
 */
import { formatScales, parseScales, type Scales } from './channel-scale.js';
import type { DisplayFilter } from './iir-filter.js';
import { formatReference, parseReference, type Reference, type SourceChannel } from './montage.js';
import { timeFormats, type TimeFormat } from './time-format.js';

export interface ViewSettings {
  /** Source channels picked, in order (indices into the group's channels). */
  shown: number[];
  reference: Reference;
  filter: DisplayFilter;
  scales: Scales;
  /** Every row scales itself to its own min and max on screen. */
  auto: boolean;
  hideBad: boolean;
  /** A level the user forced; undefined: chosen from the zoom. */
  level?: number | undefined;
  rowsPerPage: number;
  timeFormat: TimeFormat;
}

export const rowsPerPageChoices = [8, 16, 24, 32, 48, 64];
export const defaultRowsPerPage = 24;

export interface ViewQuery {
  settings: ViewSettings;
  /** Window start and span in seconds, when the address gives them. */
  startSeconds?: number | undefined;
  spanSeconds?: number | undefined;
}

function positive(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export function defaultSettings(channels: readonly SourceChannel[]): ViewSettings {
  return { shown: channels.map((_, i) => i), reference: { kind: 'own' }, filter: {}, scales: {}, auto: false, hideBad: false, rowsPerPage: defaultRowsPerPage, timeFormat: 's' };
}

export function parseViewQuery(params: URLSearchParams, channels: readonly SourceChannel[]): ViewQuery {
  const settings = defaultSettings(channels);
  const ch = params.get('ch');
  if (ch) {
    const byLabel = new Map(channels.map((c, i) => [c.label, i]));
    const shown = ch.split(',').map((l) => byLabel.get(l.trim())).filter((i): i is number => i !== undefined);
    if (shown.length) settings.shown = [...new Set(shown)];
  }
  const { scales, auto } = parseScales(params.get('scale'));
  settings.scales = scales;
  settings.auto = auto;
  const notch = Number(params.get('notch'));
  settings.filter = { hp: positive(params.get('hp')), lp: positive(params.get('lp')), notch: notch === 50 || notch === 60 ? notch : undefined };
  settings.reference = parseReference(params.get('ref'), channels);
  const level = params.get('level');
  if (level !== null && /^\d+$/.test(level)) settings.level = Number(level);
  const rows = Number(params.get('rows'));
  if (rowsPerPageChoices.includes(rows)) settings.rowsPerPage = rows;
  const time = params.get('time') as TimeFormat | null;
  if (time && timeFormats.includes(time)) settings.timeFormat = time;
  settings.hideBad = params.get('bad') === 'hide';
  const t = Number(params.get('t'));
  const span = positive(params.get('span'));
  return { settings, startSeconds: params.get('t') !== null && Number.isFinite(t) && t >= 0 ? t : undefined, spanSeconds: span };
}

const viewKeys = ['t', 'span', 'ch', 'scale', 'hp', 'lp', 'notch', 'ref', 'level', 'rows', 'time', 'bad'];

/** Writes the view into `params` (other parameters, such as `recording` and `group`, are kept). */
export function writeViewQuery(params: URLSearchParams, view: Required<Pick<ViewQuery, 'startSeconds' | 'spanSeconds'>> & { settings: ViewSettings }, channels: readonly SourceChannel[]): void {
  for (const key of viewKeys) params.delete(key);
  const s = view.settings;
  const round = (x: number) => String(Number(x.toFixed(3)));
  params.set('t', round(view.startSeconds));
  params.set('span', round(view.spanSeconds));
  const allInOrder = s.shown.length === channels.length && s.shown.every((c, i) => c === i);
  if (!allInOrder) params.set('ch', s.shown.map((i) => channels[i]!.label).join(','));
  const scale = s.auto ? 'auto' : formatScales(s.scales);
  if (scale) params.set('scale', scale);
  if (s.filter.hp) params.set('hp', String(s.filter.hp));
  if (s.filter.lp) params.set('lp', String(s.filter.lp));
  if (s.filter.notch) params.set('notch', String(s.filter.notch));
  const ref = formatReference(s.reference);
  if (ref) params.set('ref', ref);
  if (s.level !== undefined) params.set('level', String(s.level));
  if (s.rowsPerPage !== defaultRowsPerPage) params.set('rows', String(s.rowsPerPage));
  if (s.timeFormat !== 's') params.set('time', s.timeFormat);
  if (s.hideBad) params.set('bad', 'hide');
}
