/**
 * A synthetic BIDS dataset generated on the spot, for `nds serve --demo`: a 64-channel, 10-minute resting EEG
 * (1/f background, posterior alpha at 8–12 Hz that grows with the eyes closed, blinks on the frontal
 * channels while they are open, a little central beta) with its blocks and blinks in `_events.tsv`, and a
 * 60-second, 4-channel EMG of grip contractions. Everything is computed here from a seeded generator, so the
 * same call gives the same bytes; nothing is read from outside the repository.
 */

export interface SyntheticFile {
  /** Relative path in the BIDS tree, `/`-separated. */
  path: string;
  bytes: Uint8Array;
}

export interface SyntheticOptions {
  /** Seconds of EEG (default 600). */
  eegSeconds?: number;
  /** Seconds of EMG (default 60). */
  emgSeconds?: number;
  seed?: number;
}

/** The extended 10-20 positions of a 64-channel cap. */
export const EEG_64 = [
  'Fp1', 'Fpz', 'Fp2', 'AF7', 'AF3', 'AFz', 'AF4', 'AF8', 'F7', 'F5', 'F3', 'F1', 'Fz', 'F2', 'F4', 'F6',
  'F8', 'FT7', 'FC5', 'FC3', 'FC1', 'FCz', 'FC2', 'FC4', 'FC6', 'FT8', 'T7', 'C5', 'C3', 'C1', 'Cz', 'C2',
  'C4', 'C6', 'T8', 'TP7', 'CP5', 'CP3', 'CP1', 'CPz', 'CP2', 'CP4', 'CP6', 'TP8', 'P7', 'P5', 'P3', 'P1',
  'Pz', 'P2', 'P4', 'P6', 'P8', 'PO7', 'PO3', 'POz', 'PO4', 'PO8', 'O1', 'Oz', 'O2', 'Iz', 'PO9', 'PO10',
] as const;

const EEG_RATE = 256;
const EMG_RATE = 2000;
const BLOCK_SECONDS = 30;

export function syntheticBidsDataset(options: SyntheticOptions = {}): SyntheticFile[] {
  const eegSeconds = options.eegSeconds ?? 600;
  const emgSeconds = options.emgSeconds ?? 60;
  const random = gaussianSource(options.seed ?? 20261124);
  const text = (path: string, content: string): SyntheticFile => ({ path, bytes: new TextEncoder().encode(content) });
  const json = (path: string, value: unknown) => text(path, `${JSON.stringify(value, null, 2)}\n`);
  const eeg = syntheticEeg(eegSeconds, random);
  const emg = syntheticEmg(emgSeconds, random);
  return [
    json('dataset_description.json', {
      Name: 'nds demo: synthetic resting EEG and grip EMG',
      BIDSVersion: '1.9.0',
      DatasetType: 'raw',
      License: 'CC0-1.0',
      Authors: ['nds demo generator'],
      GeneratedBy: [{ Name: 'nds serve --demo', Description: 'Signals computed on the spot: no recording of a person.' }],
    }),
    text('README', 'Synthetic data made by `nds serve --demo`.\n\nsub-01/eeg: 64-channel resting EEG, 10 minutes at 256 Hz: eyes open and closed in 30-s blocks,\nposterior alpha (8-12 Hz) stronger with the eyes closed, blinks on the frontal channels while they are open,\na 1/f background. sub-01/emg: 4 channels of surface EMG at 2000 Hz during grip contractions.\n'),
    text('participants.tsv', 'participant_id\tage\tsex\nsub-01\t30\tn/a\n'),
    { path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', bytes: eeg.edf },
    json('sub-01/eeg/sub-01_task-rest_eeg.json', {
      TaskName: 'rest',
      TaskDescription: 'Resting with the eyes open and closed in alternating 30-s blocks',
      SamplingFrequency: EEG_RATE,
      PowerLineFrequency: 50,
      EEGReference: 'average',
      SoftwareFilters: 'n/a',
      EEGChannelCount: EEG_64.length,
      RecordingDuration: eegSeconds,
      RecordingType: 'continuous',
    }),
    text('sub-01/eeg/sub-01_task-rest_channels.tsv', `name\ttype\tunits\n${EEG_64.map((n) => `${n}\tEEG\tuV`).join('\n')}\n`),
    text('sub-01/eeg/sub-01_task-rest_events.tsv', eventsTsv(eeg.events)),
    { path: 'sub-01/emg/sub-01_task-grip_emg.edf', bytes: emg.edf },
    json('sub-01/emg/sub-01_task-grip_emg.json', {
      TaskName: 'grip',
      TaskDescription: 'Power grip held for 3 s every 8 s',
      SamplingFrequency: EMG_RATE,
      PowerLineFrequency: 50,
      EMGReference: 'bipolar',
      SoftwareFilters: 'n/a',
      EMGChannelCount: EMG_CHANNELS.length,
      RecordingDuration: emgSeconds,
      RecordingType: 'continuous',
    }),
    text('sub-01/emg/sub-01_task-grip_channels.tsv', `name\ttype\tunits\n${EMG_CHANNELS.map((n) => `${n}\tEMG\tuV`).join('\n')}\n`),
    text('sub-01/emg/sub-01_task-grip_events.tsv', eventsTsv(emg.events)),
  ];
}

interface SyntheticEvent {
  onset: number;
  duration: number;
  trial_type: string;
}

function eventsTsv(events: SyntheticEvent[]): string {
  return `onset\tduration\ttrial_type\n${events.map((e) => `${e.onset.toFixed(3)}\t${e.duration.toFixed(3)}\t${e.trial_type}`).join('\n')}\n`;
}

/** How strongly a channel sees each source, from its position's name. */
function weights(name: string): { alpha: number; blink: number; beta: number } {
  const n = name.toUpperCase();
  const alpha = /^(O|IZ|PO)/.test(n) ? 1 : /^P/.test(n) ? 0.6 : /^(CP|TP)/.test(n) ? 0.3 : /^(C|T)/.test(n) ? 0.15 : 0.06;
  const blink = /^FP/.test(n) ? 1 : /^AF/.test(n) ? 0.6 : /^F[^CT]/.test(n) || n === 'FZ' ? 0.3 : /^F[CT]/.test(n) ? 0.12 : 0.02;
  const beta = /^(C|FC|CP)/.test(n) ? 1 : 0.3;
  return { alpha, blink, beta };
}

function syntheticEeg(seconds: number, random: () => number): { edf: Uint8Array; events: SyntheticEvent[] } {
  const rate = EEG_RATE;
  const total = seconds * rate;
  const channels = EEG_64.map(weights);
  const events: SyntheticEvent[] = [];
  // Blocks: eyes open first, then alternating.
  const closed = (t: number) => Math.floor(t / BLOCK_SECONDS) % 2 === 1;
  for (let start = 0; start < seconds; start += BLOCK_SECONDS) events.push({ onset: start, duration: Math.min(BLOCK_SECONDS, seconds - start), trial_type: closed(start) ? 'eyes_closed' : 'eyes_open' });
  // Blinks every 2-6 s while the eyes are open.
  const blinks: number[] = [];
  for (let t = 1 + random() ** 2; t < seconds - 1; t += 2 + 4 * Math.abs(uniform(random))) {
    if (closed(t)) continue;
    blinks.push(t);
    events.push({ onset: t, duration: 0.3, trial_type: 'blink' });
  }
  events.sort((a, b) => a.onset - b.onset);
  const blinkWave = new Float32Array(total);
  for (const t0 of blinks) {
    const from = Math.max(0, Math.floor((t0 - 0.1) * rate));
    const to = Math.min(total, Math.ceil((t0 + 0.5) * rate));
    const height = 110 + 50 * uniform(random);
    // A fast rise and a slower fall, as the eyelid's potential is.
    for (let i = from; i < to; i++) {
      const dt = i / rate - t0;
      blinkWave[i] += height * (dt < 0 ? Math.exp(-((dt / 0.05) ** 2)) : Math.exp(-((dt / 0.12) ** 2)));
    }
  }
  // Alpha: one posterior generator with a wandering frequency (9-11 Hz) and a waxing and waning envelope.
  const alpha = new Float32Array(total);
  let phase = 0;
  let envelope = 0.5;
  for (let i = 0; i < total; i++) {
    const t = i / rate;
    const freq = 10 + 0.9 * Math.sin((2 * Math.PI * t) / 23) + 0.3 * Math.sin((2 * Math.PI * t) / 7.1);
    phase += (2 * Math.PI * freq) / rate;
    envelope += 0.02 * (0.5 - envelope) + 0.01 * random();
    const target = closed(t) ? 28 : 7;
    alpha[i] = target * Math.max(0.1, envelope + 0.35 * Math.sin((2 * Math.PI * t) / 3.7)) * Math.sin(phase);
  }
  const data = new Float32Array(total * channels.length);
  const common = pinkNoise(total, random);
  for (let c = 0; c < channels.length; c++) {
    const w = channels[c]!;
    const own = pinkNoise(total, random);
    const betaPhase = 2 * Math.PI * uniform(random);
    const alphaGain = w.alpha * (0.85 + 0.3 * Math.abs(uniform(random)));
    const base = c * total;
    for (let i = 0; i < total; i++) {
      const t = i / rate;
      const beta = 1.5 * w.beta * Math.sin(2 * Math.PI * 21 * t + betaPhase) * (0.6 + 0.4 * Math.sin((2 * Math.PI * t) / 5.3));
      data[base + i] = 9 * own[i]! + 5 * common[i]! + alphaGain * alpha[i]! + w.blink * blinkWave[i]! + beta;
    }
  }
  return { edf: writeEdf({ labels: [...EEG_64], rate, seconds, data, physical: 800, unit: 'uV', recordingId: 'Startdate 24-NOV-2026 X X nds-demo' }), events };
}

const EMG_CHANNELS = ['FDS', 'EDC', 'FCR', 'ECR'];

function syntheticEmg(seconds: number, random: () => number): { edf: Uint8Array; events: SyntheticEvent[] } {
  const rate = EMG_RATE;
  const total = seconds * rate;
  const events: SyntheticEvent[] = [];
  const force = new Float32Array(total);
  for (let start = 2; start + 3 <= seconds; start += 8) {
    events.push({ onset: start, duration: 3, trial_type: 'grip' });
    for (let i = Math.floor(start * rate); i < Math.min(total, Math.ceil((start + 3.4) * rate)); i++) {
      const t = i / rate - start;
      // Ramps of 0.3 s up and down around a 3-s hold.
      force[i] = t < 0.3 ? t / 0.3 : t < 3 ? 1 : Math.max(0, 1 - (t - 3) / 0.4);
    }
  }
  const gains = [1, 0.55, 0.8, 0.4];
  const data = new Float32Array(total * EMG_CHANNELS.length);
  for (let c = 0; c < EMG_CHANNELS.length; c++) {
    let previous = 0;
    let smooth = 0;
    for (let i = 0; i < total; i++) {
      // White noise, differenced (a high-pass) and smoothed a little: the 20-450 Hz band of surface EMG.
      const white = random();
      const band = white - previous;
      previous = white;
      smooth = 0.6 * smooth + 0.4 * band;
      data[c * total + i] = (4 + 220 * gains[c]! * force[i]!) * smooth;
    }
  }
  return { edf: writeEdf({ labels: EMG_CHANNELS, rate, seconds, data, physical: 2000, unit: 'uV', recordingId: 'Startdate 24-NOV-2026 X X nds-demo' }), events };
}

interface EdfSpec {
  labels: string[];
  rate: number;
  seconds: number;
  /** Channel-major physical values: all of channel 0, then channel 1 ... */
  data: Float32Array;
  /** Physical range ±physical. */
  physical: number;
  unit: string;
  recordingId: string;
}

/** A plain 16-bit EDF with 1-s data records, from physical values (clipped to the range). */
export function writeEdf(spec: EdfSpec): Uint8Array {
  const ns = spec.labels.length;
  const headerBytes = 256 * (ns + 1);
  const records = spec.seconds;
  const out = new Uint8Array(headerBytes + records * ns * spec.rate * 2);
  const put = (at: number, value: string, width: number) => {
    const s = value.slice(0, width).padEnd(width, ' ');
    for (let i = 0; i < width; i++) out[at + i] = s.charCodeAt(i) & 0x7f;
  };
  put(0, '0', 8);
  put(8, 'X X X X', 80);
  put(88, spec.recordingId, 80);
  put(168, '24.11.26', 8);
  put(176, '10.00.00', 8);
  put(184, String(headerBytes), 8);
  put(192, '', 44);
  put(236, String(records), 8);
  put(244, '1', 8);
  put(252, String(ns), 4);
  const fields: Array<[number, (i: number) => string]> = [
    [16, (i) => spec.labels[i]!],
    [80, () => 'AgAgCl electrode'],
    [8, () => spec.unit],
    [8, () => String(-spec.physical)],
    [8, () => String(spec.physical)],
    [8, () => '-32768'],
    [8, () => '32767'],
    [80, () => 'HP:0.1Hz LP:100Hz'],
    [8, () => String(spec.rate)],
    [32, () => ''],
  ];
  let at = 256;
  for (const [width, value] of fields) {
    for (let i = 0; i < ns; i++) put(at + i * width, value(i), width);
    at += width * ns;
  }
  const view = new DataView(out.buffer);
  const scale = 65535 / (2 * spec.physical);
  const total = spec.seconds * spec.rate;
  let offset = headerBytes;
  for (let r = 0; r < records; r++) {
    for (let c = 0; c < ns; c++) {
      const base = c * total + r * spec.rate;
      for (let i = 0; i < spec.rate; i++) {
        const digital = Math.round((spec.data[base + i]! + spec.physical) * scale - 32768);
        view.setInt16(offset, Math.max(-32768, Math.min(32767, digital)), true);
        offset += 2;
      }
    }
  }
  return out;
}

/** Approximately 1/f noise of unit scale: three first-order filters of white noise at spread time constants. */
function pinkNoise(n: number, random: () => number): Float32Array {
  const out = new Float32Array(n);
  let a = 0;
  let b = 0;
  let c = 0;
  for (let i = 0; i < n; i++) {
    const w = random();
    a = 0.99 * a + 0.1 * w;
    b = 0.9 * b + 0.25 * w;
    c = 0.5 * c + 0.35 * w;
    out[i] = 0.45 * a + 0.45 * b + 0.5 * c;
  }
  return out;
}

/** Standard normal values from a seeded generator (mulberry32 and Box-Muller). */
function gaussianSource(seed: number): () => number {
  let state = seed >>> 0;
  const uniform01 = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    const u = Math.max(1e-12, uniform01());
    const v = uniform01();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** A value in [-1, 1) from the normal source (its sign and tail fold into a bounded number). */
function uniform(random: () => number): number {
  return Math.tanh(random() / 1.5);
}
