/** The fixtures of the MCP tests: a public dataset (real EDF files with events, a synthetic 10 Hz recording), a private one, and SDK clients. */
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { fixtures, makeRepo } from '../recordings/support.js';

export const RATE = 256;
export const SECONDS = 20;
export const SINE_HZ = 10;
/** Amplitude of the sine channels, µV. */
export const AMPLITUDE = 50;

export const REAL = 'sub-01/eeg/sub-01_task-matchingpennies_eeg.edf';
/** 64 channels of 16,384 samples: a window of a million values. */
export const BIG = 'sub-03/eeg/sub-03_task-big_eeg.edf';
export const SINE = 'sub-02/eeg/sub-02_task-sine_eeg.edf';
const EVENTS = 'bids/eeg_matchingpennies/sub-05/eeg/sub-05_task-matchingpennies_events.tsv';

/**
 * 20 s at 256 Hz, ±1000 µV over 16 bits: Fz and Cz a 10 Hz sine of 50 µV, Pz the same sine marked bad in
 * channels.tsv, FLAT a constant, CLIP a 2000 µV sine cut at the range, and EOG a 1 Hz sine of 200 µV.
 */
export function sineRecording(): { edf: Uint8Array; channels: string; events: string } {
  const n = RATE * SECONDS;
  const digital = (f: (t: number) => number) => Array.from({ length: n }, (_, i) => Math.max(-32768, Math.min(32767, Math.round((f(i / RATE) / 1000) * 32767))));
  const sine = (amplitude: number, hz: number) => (t: number) => amplitude * Math.sin(2 * Math.PI * hz * t);
  const signal = (label: string, f: (t: number) => number) => ({ label, unit: 'uV', physicalMin: -1000 * (32768 / 32767), physicalMax: 1000, digitalMin: -32768, digitalMax: 32767, samplesPerRecord: RATE, samples: digital(f) });
  const edf = writeEdf({
    recordDuration: 1,
    records: SECONDS,
    signals: [signal('Fz', sine(AMPLITUDE, SINE_HZ)), signal('Cz', sine(AMPLITUDE, SINE_HZ)), signal('Pz', sine(AMPLITUDE, SINE_HZ)), signal('FLAT', () => 12), signal('CLIP', sine(2000, 3)), signal('EOG', sine(200, 1))],
  });
  const channels = ['name\ttype\tunits\tstatus', 'Fz\tEEG\tuV\tgood', 'Cz\tEEG\tuV\tgood', 'Pz\tEEG\tuV\tbad', 'FLAT\tEEG\tuV\tgood', 'CLIP\tEEG\tuV\tgood', 'EOG\tEOG\tuV\tgood'].join('\n') + '\n';
  const events = ['onset\tduration\ttrial_type\tvalue', '2.0\t0.5\tstimulus\t1', '5.0\t0\tresponse\t2', '12.5\t1.0\tstimulus\t1'].join('\n') + '\n';
  return { edf, channels, events };
}

/** `channels` channels of `samples` samples at 256 Hz: noise-like integers, different on every channel. */
export function bigRecording(channels: number, samples: number): Uint8Array {
  let seed = 12345;
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) - 32768;
  return writeEdf({
    recordDuration: samples / RATE,
    records: 1,
    signals: Array.from({ length: channels }, (_, c) => ({ label: `E${c + 1}`, unit: 'uV', physicalMin: -3276.8, physicalMax: 3276.7, digitalMin: -32768, digitalMax: 32767, samplesPerRecord: samples, samples: Array.from({ length: samples }, next) })),
  });
}

/** The public dataset's source: the matching-pennies events beside a real EDF, and the synthetic recording. */
export function publicRepo(): string {
  const sine = sineRecording();
  return makeRepo([
    { from: 'mne-python/edf/test.edf', to: REAL, events: readFileSync(path.join(fixtures, EVENTS), 'utf8') },
    { bytes: sine.edf, to: SINE, events: sine.events },
    { bytes: new TextEncoder().encode(sine.channels), to: SINE.replace(/_eeg\.edf$/, '_channels.tsv') },
    { bytes: bigRecording(64, 16_384), to: BIG },
  ]);
}

export function privateRepo(): string {
  return makeRepo([{ from: 'mne-python/edf/test.edf', to: REAL }]);
}

/** An SDK client connected to the server's `/mcp` over streamable HTTP, with a bearer key when given. */
export async function httpClient(server: Pick<TestServer, 'url'>, key?: string): Promise<Client> {
  const client = new Client({ name: 'nds-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), key ? { requestInit: { headers: { Authorization: `Bearer ${key}` } } } : {});
  await client.connect(transport);
  return client;
}

/** A tool's answer, checked to be one (not an error) with structured content equal to its text. */
export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<{ structured: T; result: CallToolResult }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
  const text = result.content.find((c) => c.type === 'text');
  if (!text || text.type !== 'text' || JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(result.structuredContent)) throw new Error(`${name}: the text is not the structured content`);
  return { structured: result.structuredContent as T, result };
}

/** A tool's refusal: the structured error body. */
export async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<{ error: string; message: string; details?: string[] }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError) throw new Error(`${name} answered: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
  const text = result.content[0];
  return text?.type === 'text' ? (JSON.parse(text.text.startsWith('{') ? text.text : JSON.stringify({ error: 'mcp', message: text.text })) as { error: string; message: string }) : { error: 'none', message: '' };
}

/** Parses a `.npy` (format 1.0, little-endian float32, C order). */
export function readNpy(bytes: Uint8Array): { shape: number[]; data: Float32Array } {
  const headerLength = bytes[8]! | (bytes[9]! << 8);
  const header = new TextDecoder().decode(bytes.subarray(10, 10 + headerLength));
  const shape = /'shape': \((\d+), (\d+)\)/.exec(header)!.slice(1).map(Number);
  return { shape, data: new Float32Array(Uint8Array.prototype.slice.call(bytes, 10 + headerLength).buffer) };
}

/** A PNG decoded with node:zlib (8-bit RGB or RGBA, no interlace): pixels as 0xRRGGBB, row by row. */
export function decodePng(png: Uint8Array): { width: number; height: number; rgb: Uint32Array } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => png[i] === b)) throw new Error('not a PNG');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 3;
  const idat: Uint8Array[] = [];
  while (at < png.length) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      if (data[8] !== 8 || (data[9] !== 2 && data[9] !== 6) || data[12] !== 0) throw new Error('only 8-bit RGB(A), not interlaced');
      channels = data[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= channels ? out[y * stride + x - channels]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels]! : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      out[y * stride + x] = (v + [0, a, b, (a + b) >> 1, paeth][filter]!) & 0xff;
    }
  }
  const rgb = new Uint32Array(width * height);
  for (let i = 0; i < rgb.length; i++) rgb[i] = (out[i * channels]! << 16) | (out[i * channels + 1]! << 8) | out[i * channels + 2]!;
  return { width, height, rgb };
}
