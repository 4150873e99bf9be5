/**
 * Montages: which rows are drawn and how each is derived from the source channels at level 0 — the
 * recording's own reference, the common average, a chosen reference channel (or the mean of several, e.g.
 * linked mastoids `A1+A2`), or bipolar pairs (the 10-20 longitudinal and transverse chains, or a list the
 * user types). Pure.
 */
import { typeKey } from './channel-scale.js';

export interface SourceChannel {
  label: string;
  type: string;
  unit: string;
  bad: boolean;
}

export type Reference =
  | { kind: 'own' }
  | { kind: 'avg' }
  | { kind: 'channel'; labels: string[] }
  | { kind: 'bipolar'; pairs: Array<[string, string]> };

/** One drawn row: `plus` minus the mean of `minus` (empty `minus`: the channel itself). */
export interface Derivation {
  label: string;
  type: string;
  unit: string;
  bad: boolean;
  plus: number;
  minus: number[];
}

/** Types a reference applies to: the scalp and intracranial voltages. EOG, ECG, stimulus rows keep their own. */
const referenced = new Set(['eeg', 'ieeg']);

export const longitudinalChain = [
  'Fp1-F7', 'F7-T7', 'T7-P7', 'P7-O1', 'Fp1-F3', 'F3-C3', 'C3-P3', 'P3-O1', 'Fz-Cz', 'Cz-Pz',
  'Fp2-F4', 'F4-C4', 'C4-P4', 'P4-O2', 'Fp2-F8', 'F8-T8', 'T8-P8', 'P8-O2',
];
export const transverseChain = [
  'F7-Fp1', 'Fp1-Fp2', 'Fp2-F8', 'F7-F3', 'F3-Fz', 'Fz-F4', 'F4-F8', 'T7-C3', 'C3-Cz', 'Cz-C4', 'C4-T8',
  'P7-P3', 'P3-Pz', 'Pz-P4', 'P4-P8', 'O1-Oz', 'Oz-O2',
];

/** The 10-10 names of the old 10-20 temporal electrodes. */
const aliases: Record<string, string> = { t3: 't7', t4: 't8', t5: 'p7', t6: 'p8' };

/** A label reduced for matching: `EEG Fp1-REF` → `fp1`, `T3` → `t7`. */
export function electrodeName(label: string): string {
  const name = label.trim().replace(/^(EEG|EOG)\s+/i, '').replace(/[-_ ](REF|LE|AVG|A1|A2|M1|M2)$/i, '').toLowerCase();
  return aliases[name] ?? name;
}

/** Index of the channel called `name` (exact label first, then by electrode name). */
export function findChannel(channels: readonly SourceChannel[], name: string): number {
  const exact = channels.findIndex((c) => c.label === name);
  if (exact >= 0) return exact;
  const wanted = electrodeName(name);
  return channels.findIndex((c) => electrodeName(c.label) === wanted);
}

/** Splits `A-B` at the hyphen that leaves a channel on each side (labels may hold hyphens themselves). */
export function splitPair(channels: readonly SourceChannel[], text: string): [string, string] | undefined {
  for (let i = text.indexOf('-'); i > 0; i = text.indexOf('-', i + 1)) {
    const a = text.slice(0, i).trim();
    const b = text.slice(i + 1).trim();
    if (findChannel(channels, a) >= 0 && findChannel(channels, b) >= 0) return [a, b];
  }
  return undefined;
}

/** The pairs of `chain` this recording has both electrodes of. */
export function chainPairs(channels: readonly SourceChannel[], chain: readonly string[]): Array<[string, string]> {
  return chain.map((p) => splitPair(channels, p)).filter((p): p is [string, string] => p !== undefined);
}

/** Whether a chain is worth offering: at least half of its pairs exist. */
export function chainAvailable(channels: readonly SourceChannel[], chain: readonly string[]): boolean {
  return chainPairs(channels, chain).length >= chain.length / 2;
}

/** `avg`, `bipolar:Fp1-F7,F7-T7`, a label or `A1+A2`; empty or absent: the own reference. */
export function parseReference(text: string | null | undefined, channels: readonly SourceChannel[]): Reference {
  const t = (text ?? '').trim();
  if (t === '' || t === 'own') return { kind: 'own' };
  if (t === 'avg') return { kind: 'avg' };
  if (t.startsWith('bipolar:')) {
    const pairs = t.slice('bipolar:'.length).split(',').map((p) => splitPair(channels, p)).filter((p): p is [string, string] => p !== undefined);
    return pairs.length ? { kind: 'bipolar', pairs } : { kind: 'own' };
  }
  const labels = t.split('+').map((s) => s.trim()).filter((s) => findChannel(channels, s) >= 0);
  return labels.length ? { kind: 'channel', labels } : { kind: 'own' };
}

/** The reference as the `ref` query parameter; undefined for the own reference. */
export function formatReference(ref: Reference): string | undefined {
  switch (ref.kind) {
    case 'own':
      return undefined;
    case 'avg':
      return 'avg';
    case 'channel':
      return ref.labels.join('+');
    case 'bipolar':
      return `bipolar:${ref.pairs.map(([a, b]) => `${a}-${b}`).join(',')}`;
  }
}

/**
 * The rows to draw. `shown` lists the source channels picked, in order; a bipolar montage draws its pairs
 * in the montage's order instead (its channels need not be picked). The average is over the good channels
 * of the row's type; a reference channel is not re-referenced to itself.
 */
export function derivations(channels: readonly SourceChannel[], shown: readonly number[], ref: Reference): Derivation[] {
  const own = (i: number): Derivation => ({ ...channels[i]!, plus: i, minus: [] });
  if (ref.kind === 'own') return shown.map(own);
  if (ref.kind === 'bipolar') {
    const pairs = ref.pairs.map(([a, b]): Derivation => {
      const ia = findChannel(channels, a);
      const ib = findChannel(channels, b);
      const ca = channels[ia]!;
      return { label: `${ca.label}-${channels[ib]!.label}`, type: ca.type, unit: ca.unit, bad: ca.bad || channels[ib]!.bad, plus: ia, minus: [ib] };
    });
    // EOG, ECG, EMG and the other non-scalp rows picked keep their own reference, after the chain.
    return [...pairs, ...shown.filter((i) => !referenced.has(typeKey(channels[i]!.type))).map(own)];
  }
  if (ref.kind === 'avg') {
    const byType = new Map<string, number[]>();
    channels.forEach((c, i) => {
      const key = typeKey(c.type);
      if (!referenced.has(key) || c.bad) return;
      if (!byType.has(key)) byType.set(key, []);
      byType.get(key)!.push(i);
    });
    return shown.map((i) => {
      const members = byType.get(typeKey(channels[i]!.type));
      return members && members.length > 1 ? { ...channels[i]!, label: `${channels[i]!.label}-avg`, plus: i, minus: members } : own(i);
    });
  }
  const refs = ref.labels.map((l) => findChannel(channels, l));
  const name = ref.labels.join('+');
  return shown.map((i) =>
    referenced.has(typeKey(channels[i]!.type)) && !refs.includes(i) ? { ...channels[i]!, label: `${channels[i]!.label}-${name}`, plus: i, minus: refs } : own(i),
  );
}

/** The 19 electrodes of the 10-20 system (10-10 names for the temporal ones; `electrodeName` maps T3…T6). */
const tenTwenty = ['fp1', 'fp2', 'f7', 'f3', 'fz', 'f4', 'f8', 't7', 'c3', 'cz', 'c4', 't8', 'p7', 'p3', 'pz', 'p4', 'p8', 'o1', 'o2'];

/**
 * The linked references worth offering: mastoids by their names (`M1+M2`, `TP9+TP10`), and `A1+A2` only when
 * something says A1 and A2 are the ears — `channels.tsv` types them `REF`, or the recording is laid out in the
 * 10-20 system (at least 8 of its 19 scalp names) and has no other electrode of a lettered bank (A3, B1…).
 * BioSemi caps name their scalp electrodes A1…A32, B1…B32: there A1 and A2 are at the vertex, not the ears.
 */
export function linkedReferences(channels: readonly SourceChannel[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const has = (name: string) => findChannel(channels, name) >= 0;
  const names = new Set(channels.map((c) => electrodeName(c.label)));
  const isRef = (name: string) => typeKey(channels[findChannel(channels, name)]?.type ?? '') === 'ref';
  const tenTwentyLayout = tenTwenty.filter((n) => names.has(n)).length >= 8;
  // BioSemi banks are A…H; of those letters only C, F, O, P, T (and two-letter names) are 10-20 names.
  const bankElectrodes = [...names].some((n) => /^[abdegh]\d{1,2}$/.test(n) && n !== 'a1' && n !== 'a2');
  if (has('A1') && has('A2') && ((isRef('A1') && isRef('A2')) || (tenTwentyLayout && !bankElectrodes))) out.push(['A1', 'A2']);
  if (has('M1') && has('M2')) out.push(['M1', 'M2']);
  if (has('TP9') && has('TP10')) out.push(['TP9', 'TP10']);
  return out;
}

/**
 * What a derivation can be over one column of a view level, from its sources' stored [min, max]: `plus − mean(minus)`
 * lies within [min(plus) − mean(max(minus)), max(plus) − mean(min(minus))]. A bound, not the envelope itself (the
 * extremes of two channels need not fall on the same sample): zoomed out, a montage row is drawn no narrower than it is.
 */
export function derivationBound(plus: readonly [number, number], minus: ReadonlyArray<readonly [number, number]>): [number, number] {
  if (minus.length === 0) return [plus[0], plus[1]];
  let lo = 0;
  let hi = 0;
  for (const m of minus) {
    lo += m[0];
    hi += m[1];
  }
  return [plus[0] - hi / minus.length, plus[1] - lo / minus.length];
}

/** Source channels the derivations read. */
export function sourcesOf(rows: readonly Derivation[]): number[] {
  const set = new Set<number>();
  for (const r of rows) {
    set.add(r.plus);
    for (const m of r.minus) set.add(m);
  }
  return [...set].sort((a, b) => a - b);
}

/**
 * Each row's samples from the source samples (`source.get(i)`, all the same length). A mean used by several
 * rows (the common average) is computed once.
 */
export function applyMontage(rows: readonly Derivation[], source: ReadonlyMap<number, Float64Array>, length: number, out = new Float64Array(rows.length * length)): Float64Array[] {
  // One buffer for all rows (the caller's, or a new one) and one for the shared means: a frame's worth of rows
  // as a handful of ArrayBuffers, not one each, keeps the collector's sweeps short while panning.
  const keys = [...new Set(rows.filter((r) => r.minus.length > 0).map((r) => r.minus.join(',')))];
  const meanBuffer = new Float64Array(keys.length * length);
  const means = new Map<string, Float64Array>();
  return rows.map((r, k) => {
    const plus = source.get(r.plus)!;
    const row = out.subarray(k * length, (k + 1) * length);
    if (r.minus.length === 0) {
      row.set(plus.subarray(0, length));
      return row;
    }
    const key = r.minus.join(',');
    let mean = means.get(key);
    if (!mean) {
      const at = keys.indexOf(key);
      mean = meanBuffer.subarray(at * length, (at + 1) * length);
      for (const m of r.minus) {
        const x = source.get(m)!;
        for (let i = 0; i < length; i++) mean[i]! += x[i]!;
      }
      const scale = 1 / r.minus.length;
      for (let i = 0; i < length; i++) mean[i]! *= scale;
      means.set(key, mean);
    }
    for (let i = 0; i < length; i++) row[i] = plus[i]! - mean[i]!;
    return row;
  });
}
