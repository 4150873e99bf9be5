/**
 * A synthetic recording that looks like scalp EEG, for screenshots and the benchmark: 19 channels of the
 * 10-20 system plus EOG and ECG at 256 Hz, with 1/f background, posterior alpha, eye blinks on the frontal
 * channels, heartbeats, 50 Hz line noise, a slow drift, one noisy channel marked bad in channels.tsv, and
 * events (stimuli every ~2 s and blinks with durations). Deterministic (seeded).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeEdf } from '../../formats/support/edf-writer.js';

export const tenTwenty = ['Fp1', 'Fp2', 'F7', 'F3', 'Fz', 'F4', 'F8', 'T7', 'C3', 'Cz', 'C4', 'T8', 'P7', 'P3', 'Pz', 'P4', 'P8', 'O1', 'O2'];

/** Mulberry32: a small seeded generator, so every run draws the same recording. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RealisticEeg {
  /** The BIDS root and the EDF inside it. */
  root: string;
  file: string;
}

export async function writeRealisticEeg(root: string, options: { seconds?: number; rate?: number; extraChannels?: number } = {}): Promise<RealisticEeg> {
  const rate = options.rate ?? 256;
  const seconds = options.seconds ?? 120;
  const n = rate * seconds;
  const rnd = random(7);
  const labels = [...tenTwenty, ...Array.from({ length: options.extraChannels ?? 0 }, (_, i) => `E${i + 1}`), 'EOG', 'ECG'];
  // Background: per channel, a sum of sines at random phases with 1/f amplitudes (1/f² power, 1–40 Hz), partly shared.
  const shared = Array.from({ length: 60 }, () => ({ hz: 1 + rnd() * 39, phase: rnd() * 2 * Math.PI }));
  const blinks = Array.from({ length: Math.floor(seconds / 7) }, (_, i) => i * 7 + 2 + rnd() * 4);
  const beats: number[] = [];
  for (let t = 0.3; t < seconds; t += 0.8 + rnd() * 0.15) beats.push(t);
  const signals = labels.map((label, c) => {
    const own = Array.from({ length: 40 }, () => ({ hz: 1 + rnd() * 39, phase: rnd() * 2 * Math.PI }));
    const posterior = /^(O|P)/.test(label) ? 1 : /^(C|T)/.test(label) ? 0.4 : 0.15;
    const frontal = label.startsWith('Fp') ? 1 : label.startsWith('F') ? 0.35 : 0.05;
    const alphaHz = 9.8 + rnd() * 0.6;
    const alphaPhase = rnd() * 2 * Math.PI;
    const drift = rnd() * 2 * Math.PI;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t = i / rate;
      let v = 0;
      if (label === 'ECG') {
        for (const b of beats) if (Math.abs(t - b) < 0.05) v += 900 * Math.exp(-(((t - b) / 0.012) ** 2)) - 150 * Math.exp(-(((t - b - 0.03) / 0.015) ** 2));
        v += 40 * Math.sin(2 * Math.PI * 0.25 * t);
      } else {
        for (const s of shared) v += (15 / s.hz) * Math.sin(2 * Math.PI * s.hz * t + s.phase);
        for (const s of own) v += (8 / s.hz) * Math.sin(2 * Math.PI * s.hz * t + s.phase);
        // Alpha waxes and wanes (a 0.1 Hz envelope).
        v += posterior * 25 * (0.6 + 0.4 * Math.sin(2 * Math.PI * 0.1 * t + c)) * Math.sin(2 * Math.PI * alphaHz * t + alphaPhase);
        const eye = label === 'EOG' ? 4 : frontal;
        for (const b of blinks) if (Math.abs(t - b) < 0.4) v += eye * 180 * Math.exp(-(((t - b) / 0.12) ** 2));
        for (const b of beats) if (Math.abs(t - b) < 0.05) v += 4 * Math.exp(-(((t - b) / 0.012) ** 2));
        v += 30 * Math.sin(2 * Math.PI * 0.07 * t + drift);
        if (label === 'T8') v += 60 * (rnd() - 0.5) + 40 * Math.sin(2 * Math.PI * 37 * t);
      }
      v += (label === 'ECG' ? 5 : 8) * Math.sin(2 * Math.PI * 50 * t + c * 0.1);
      // A white noise floor (amplifier noise), ±1.5 µV.
      v += 3 * (rnd() - 0.5);
      out[i] = v;
    }
    return out;
  });
  const dir = path.join(root, 'sub-01', 'eeg');
  await mkdir(dir, { recursive: true });
  const step = 6400 / 65535;
  const edf = writeEdf({
    recordDuration: 1,
    records: seconds,
    startDate: '14.05.24',
    startTime: '09.30.00',
    signals: labels.map((label, c) => ({
      label,
      samplesPerRecord: rate,
      samples: Int16Array.from(signals[c]!, (v) => Math.max(-32768, Math.min(32767, Math.round((v + 3200) / step - 32768)))),
    })),
  });
  const file = path.join(dir, 'sub-01_task-rest_eeg.edf');
  await writeFile(file, edf);
  const type = (l: string) => (l === 'EOG' ? 'EOG' : l === 'ECG' ? 'ECG' : 'EEG');
  await writeFile(
    path.join(dir, 'sub-01_task-rest_channels.tsv'),
    ['name\ttype\tunits\tstatus', ...labels.map((l) => `${l}\t${type(l)}\tuV\t${l === 'T8' ? 'bad' : 'good'}`)].join('\n') + '\n',
  );
  const events: Array<[number, number, string]> = [];
  for (let t = 1; t < seconds - 1; t += 1.6 + rnd() * 0.8) events.push([t, 0, rnd() < 0.5 ? 'stimulus/left' : 'stimulus/right']);
  for (const b of blinks) events.push([b - 0.25, 0.5, 'artifact/blink']);
  events.sort((a, b) => a[0] - b[0]);
  await writeFile(path.join(dir, 'sub-01_task-rest_events.tsv'), ['onset\tduration\ttrial_type', ...events.map(([o, d, l]) => `${o.toFixed(3)}\t${d}\t${l}`)].join('\n') + '\n');
  await writeFile(path.join(dir, 'sub-01_task-rest_eeg.json'), JSON.stringify({ PowerLineFrequency: 50, SamplingFrequency: rate, EEGReference: 'FCz' }));
  await writeFile(path.join(root, 'dataset_description.json'), JSON.stringify({ Name: 'Viewer example', BIDSVersion: '1.8.0' }));
  return { root, file };
}
