/**
 * Sensitivity per channel type, the way an EEG reader sets it: a fixed number of µV per division (a division
 * is the spacing between two rows), per type, or `auto` (each row fills itself). Colours by type and the unit
 * symbols shown. Pure.
 */

/** The scale of a type: µV (or the channel's own unit when it is not a voltage) per division, or 'auto'. */
export type TypeScale = number | 'auto';
export type Scales = Record<string, TypeScale>;

/** Type key of a BIDS `channels.tsv` type: lower case, with HEOG/VEOG read as EOG and iEEG kinds as ieeg. */
export function typeKey(type: string): string {
  const t = type.trim().toUpperCase();
  if (t === 'HEOG' || t === 'VEOG') return 'eog';
  if (t === 'SEEG' || t === 'ECOG' || t === 'DBS') return 'ieeg';
  if (t === 'TRIG' || t === 'STIM' || t === 'SYSCLOCK') return 'stim';
  return t === '' ? 'misc' : t.toLowerCase();
}

/** Starting sensitivities (µV/division); stimulus and unknown types scale themselves. */
export const defaultScales: Readonly<Scales> = { eeg: 100, ieeg: 500, eog: 300, ecg: 2000, emg: 500, meg: 'auto', resp: 'auto', misc: 'auto', stim: 'auto' };

/** The sensitivity steps the keys and buttons move through (1-2-5). */
export const scaleSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

/**
 * The scale of a row of `type` in `unit`. A row whose unit is not a voltage (ARU, µS, °C…) is on its own scale
 * whatever its type says: a sensitivity in µV per division means nothing for it.
 */
export function scaleOf(scales: Scales, type: string, unit?: string): TypeScale {
  if (unit !== undefined && !isVoltage(unit)) return 'auto';
  const key = typeKey(type);
  return scales[key] ?? defaultScales[key] ?? 'auto';
}

/** The next step up (`+1`, less sensitive) or down (`-1`) from `value`. */
export function stepScale(value: number, direction: 1 | -1): number {
  if (direction > 0) return scaleSteps.find((s) => s > value * 1.0001) ?? scaleSteps.at(-1)!;
  return [...scaleSteps].reverse().find((s) => s < value * 0.9999) ?? scaleSteps[0]!;
}

/** `eeg:50,eog:100` or `auto` → scales; unknown pieces are ignored. */
export function parseScales(text: string | null | undefined): { scales: Scales; auto: boolean } {
  const scales: Scales = {};
  if (!text) return { scales, auto: false };
  if (text.trim() === 'auto') return { scales, auto: true };
  for (const part of text.split(',')) {
    const [type, value] = part.split(':');
    if (!type || !value) continue;
    const number = Number(value);
    if (value === 'auto') scales[typeKey(type)] = 'auto';
    else if (Number.isFinite(number) && number > 0) scales[typeKey(type)] = number;
  }
  return { scales, auto: false };
}

/** The scales that differ from the defaults, as `eeg:50,eog:100` (empty when none). */
export function formatScales(scales: Scales): string {
  return Object.entries(scales)
    .filter(([type, value]) => value !== (defaultScales[type] ?? 'auto'))
    .map(([type, value]) => `${type}:${value}`)
    .join(',');
}

const microvoltsPer: Record<string, number> = { v: 1e6, mv: 1e3, uv: 1, µv: 1, μv: 1, nv: 1e-3 };

/** How many µV one unit of the channel is (1 for µV, 1000 for mV); undefined when it is not a voltage. */
export function microvoltFactor(unit: string): number | undefined {
  return microvoltsPer[unit.trim().toLowerCase()];
}

/** A voltage unit, or none given (a recording that does not say is taken to be in µV). */
export function isVoltage(unit: string): boolean {
  return unit.trim() === '' || microvoltFactor(unit) !== undefined;
}

const symbols: Record<string, string> = { degc: '°C', celsius: '°C', degf: '°F', ohm: 'Ω', kohm: 'kΩ' };

/** The unit as printed: `uV` → `µV`, `uS` → `µS`, `degC` → `°C`. */
export function unitSymbol(unit: string): string {
  if (microvoltFactor(unit) === 1) return 'µV';
  return symbols[unit.trim().toLowerCase()] ?? unit.replace(/^u(?=[A-Za-z])/, 'µ');
}

/** Scale as printed for a type and one of its units: `50 µV`, `2 mV` for large voltages, or the own unit. */
export function formatScale(value: number, unit: string): string {
  if (microvoltFactor(unit) === undefined) return `${value} ${unit}`.trim();
  return value >= 1000 ? `${value / 1000} mV` : `${value} µV`;
}

const typeColours: Record<string, string> = {
  eeg: '#1f4e9c',
  ieeg: '#1f4e9c',
  eog: '#2f7d32',
  ecg: '#b02a37',
  emg: '#7a3e9d',
  resp: '#8a6d1a',
  stim: '#555555',
  misc: '#555555',
};
export const badColour = '#b8b8b8';

export function typeColour(type: string): string {
  return typeColours[typeKey(type)] ?? typeColours['misc']!;
}

/**
 * Pixels a physical value difference spans: `rowHeight / scale` per µV (per unit for non-voltages).
 * `unitFactor` converts the channel's unit to µV.
 */
export function pixelsPerUnit(scale: number, rowHeight: number, unit: string): number {
  const factor = microvoltFactor(unit) ?? 1;
  return (rowHeight / scale) * factor;
}
