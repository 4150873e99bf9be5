import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, apiFetch, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { convertedDataset, fixtures, makeRepo, reconvertedDataset } from './support.js';
import { gitIn } from '../conversion/support.js';
import { eeglabSet } from './eeglab-fixture.js';
import { LOOKUP_TTL_MS } from '../../src/recordings/store-lookups.js';

const python = '/usr/bin/python3';
const hasMne = existsSync(python) && (() => {
  try {
    execFileSync(python, ['-c', 'import mne, numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Parses a `.npy` answer (format 1.0, little-endian float32 or float64, C order). */
function readNpy(bytes: Uint8Array): { shape: number[]; data: Float32Array | Float64Array } {
  const headerLength = bytes[8]! | (bytes[9]! << 8);
  const header = new TextDecoder().decode(bytes.subarray(10, 10 + headerLength));
  const shape = /'shape': \((\d+), (\d+)\)/.exec(header)!.slice(1).map(Number);
  const body = bytes.slice(10 + headerLength);
  const data = header.includes("'<f8'") ? new Float64Array(body.buffer) : new Float32Array(body.buffer);
  return { shape, data };
}

const RATE = 256;
const SECONDS = 60;

/** A 256 Hz EDF: a 20 Hz sine (passband for 100 Hz) and an 80 Hz sine (aliases at 100 Hz), ±1000 µV. */
function sineEdf(): Uint8Array {
  const n = RATE * SECONDS;
  const sine = (f: number) => Array.from({ length: n }, (_, i) => Math.round(30000 * Math.sin((2 * Math.PI * f * i) / RATE)));
  const signal = (label: string, f: number) => ({ label, unit: 'uV', physicalMin: -1000, physicalMax: 1000, digitalMin: -32768, digitalMax: 32767, samplesPerRecord: RATE, samples: sine(f) });
  return writeEdf({ recordDuration: 1, records: SECONDS, signals: [signal('S20', 20), signal('S80', 80)] });
}

/** A one-channel, 2-second EDF whose every sample is `digital` (±1000 µV over the int16 range). */
function constantEdf(digital: number): Uint8Array {
  return writeEdf({ recordDuration: 1, records: 2, signals: [{ label: 'C', unit: 'uV', physicalMin: -1000, physicalMax: 1000, digitalMin: -32768, digitalMax: 32767, samplesPerRecord: RATE, samples: new Array(2 * RATE).fill(digital) }] });
}
const physical = (digital: number) => -1000 + ((digital + 32768) * 2000) / 65535;

describe('exact signal windows: GET /datasets/:id/signal', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let id: string;
  let privateId: string;
  const dirs: string[] = [];
  const sources: Record<string, string> = {
    edf: 'sub-01/eeg/sub-01_task-rest_eeg.edf',
    bdf: 'sub-02/eeg/sub-02_task-rest_eeg.bdf',
    vhdr: 'sub-03/eeg/sub-03_task-rest_eeg.vhdr',
    sine: 'sub-04/eeg/sub-04_task-sine_eeg.edf',
    set: 'sub-05/eeg/sub-05_task-rest_eeg.set',
  };
  let setFile: string;

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    const repo = makeRepo([
      { from: 'mne-python/edf/test.edf', to: sources.edf! },
      { from: 'mne-python/edf/test.bdf', to: sources.bdf! },
      { from: 'mne-python/brainvision/test.vhdr', to: sources.vhdr! },
      { bytes: sineEdf(), to: sources.sine! },
      { bytes: eeglabSet(), to: sources.set! },
    ]);
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-set-'));
    dirs.push(tmp);
    setFile = path.join(tmp, 'test.set');
    writeFileSync(setFile, eeglabSet());
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: sources.edf! }]);
    dirs.push(repo, priv);
    id = await convertedDataset(server, owner.user.id, repo);
    privateId = await convertedDataset(server, owner.user.id, priv, 'private');
  });
  after(async () => {
    await server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const signal = (query: string, key?: string, init?: RequestInit) => apiFetch(server, `/datasets/${id}/signal?${query}`, key, init);

  async function recording(p: string) {
    const res = await apiFetch(server, `/datasets/${id}/recordings`);
    const body = (await res.json()) as { recordings: Array<{ path: string; groups: Array<{ name: string; rate: number; n_samples: number; channels: Array<{ label: string; unit: string }> }> }> };
    return body.recordings.find((r) => r.path === p)!;
  }

  for (const [format, source] of [['EDF', 'edf'], ['BDF', 'bdf'], ['BrainVision', 'vhdr'], ['EEGLAB', 'set']] as const) {
    it(`equals MNE's physical values for the ${format} fixture`, { skip: hasMne ? false : 'python3 with mne and numpy is not installed (apt install python3-mne python3-numpy)' }, async () => {
      const rec = await recording(sources[source]!);
      const group = rec.groups[0]!;
      const picks = group.channels.slice(0, 8);
      const start = 100;
      const count = Math.min(1000, group.n_samples - start);
      const query = `path=${encodeURIComponent(rec.path)}&start_sample=${start}&n_samples=${count}&channels=${picks.map((c) => encodeURIComponent(c.label)).join(',')}`;
      const wide = await signal(`${query}&dtype=float64`);
      assert.equal(wide.status, 200, await wide.clone().text());
      assert.equal(wide.headers.get('content-type'), 'application/x-npy');
      assert.equal(wide.headers.get('x-nds-shape'), `${picks.length},${count}`);
      assert.equal(wide.headers.get('x-nds-start-sample'), String(start));
      assert.equal(wide.headers.get('x-nds-rate'), String(group.rate));
      assert.deepEqual(wide.headers.get('x-nds-channels')!.split(',').map(decodeURIComponent), picks.map((c) => c.label));
      const bytes = new Uint8Array(await wide.arrayBuffer());
      const tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-signal-'));
      dirs.push(tmp);
      writeFileSync(path.join(tmp, 'w.npy'), bytes);
      const sourceFile = source === 'set' ? setFile : source === 'vhdr' ? path.join(fixtures, 'mne-python/brainvision/test.vhdr') : path.join(fixtures, `mne-python/edf/test.${source}`);
      const out = execFileSync(python, [path.join(import.meta.dirname, 'mne_compare.py'), sourceFile, path.join(tmp, 'w.npy'), String(start), picks.map((c) => c.label).join(','), picks.map((c) => c.unit).join(',')], { encoding: 'utf8' });
      const compared = JSON.parse(out) as { nds_shape: number[]; mne_shape: number[]; relative_difference: number; close_at_float32: boolean };
      assert.deepEqual(compared.nds_shape, compared.mne_shape);
      assert.ok(compared.relative_difference < 1e-9, out);
      assert.ok(compared.close_at_float32, out);
      // float32 answers are the float64 values rounded once.
      const narrow = readNpy(new Uint8Array(await (await signal(query)).arrayBuffer()));
      assert.deepEqual(Array.from(narrow.data), Array.from(Float32Array.from(readNpy(bytes).data)));
    });
  }

  it('takes seconds or samples, answers f32 and json, and revalidates by ETag', async () => {
    const rec = await recording(sources.edf!);
    const rate = rec.groups[0]!.rate;
    const bySamples = new Uint8Array(await (await signal(`path=${rec.path}&start_sample=${rate}&n_samples=${rate / 2}&channels=A1,B2`)).arrayBuffer());
    const bySeconds = await signal(`path=${rec.path}&start=1&duration=0.5&channels=A1,B2`);
    assert.deepEqual(new Uint8Array(await bySeconds.arrayBuffer()), bySamples);
    const raw = await signal(`path=${rec.path}&start=1&duration=0.5&channels=A1,B2&format=f32`);
    assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
    const f32 = new Float32Array((await raw.arrayBuffer()).slice(0));
    assert.deepEqual(Array.from(f32), Array.from(readNpy(bySamples).data));
    const json = (await (await signal(`path=${rec.path}&start_sample=0&n_samples=4&channels=A1&format=json`)).json()) as { channels: string[]; shape: number[]; data: number[][] };
    assert.deepEqual(json.channels, ['A1']);
    assert.deepEqual(json.shape, [1, 4]);
    assert.equal(json.data[0]!.length, 4);
    const etag = bySeconds.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await signal(`path=${rec.path}&start=1&duration=0.5&channels=A1,B2`, undefined, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const byType = await signal(`path=${rec.path}&start=0&duration=0.1&channel_type=TRIG`);
    assert.equal(byType.headers.get('x-nds-channels'), 'Status');
  });

  it('reads only the chunks the window touches', async () => {
    const rec = await recording(sources.sine!);
    const objects = server.deps.objects;
    const original = { get: objects.get.bind(objects), readAll: objects.readAll.bind(objects) };
    const keys: string[] = [];
    objects.get = (key, range) => {
      keys.push(key);
      return original.get(key, range);
    };
    objects.readAll = (key) => {
      keys.push(key);
      return original.readAll(key);
    };
    try {
      const res = await signal(`path=${rec.path}&start=31&duration=2&channels=S20`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    } finally {
      Object.assign(objects, original);
    }
    const chunks = keys.filter((k) => /\/0\/c\/\d+\/\d+$/.test(k));
    // 1024-sample chunks at 256 Hz: 31 s to 33 s (samples 7936 to 8448) lies in chunks 7 and 8 only.
    assert.deepEqual(chunks.map((k) => k.split('/').slice(-2).join('/')).sort(), ['0/7', '0/8']);
  });

  it('refuses windows past the end, too large, or of unknown channels, with a reason', async () => {
    const rec = await recording(sources.edf!);
    const past = await signal(`path=${rec.path}&start=5&duration=2`);
    assert.equal(past.status, 400);
    const body = (await past.json()) as { error: string; message: string };
    assert.equal(body.error, 'validation_failed');
    assert.match(body.message, /past the end/);
    const large = await signal(`path=${rec.path}&rate=40960`);
    assert.equal(large.status, 400);
    assert.match(((await large.json()) as { message: string }).message, /at most 16777216/);
    const unknown = await signal(`path=${rec.path}&channels=Nope`);
    assert.equal(unknown.status, 400);
    assert.match(((await unknown.json()) as { message: string }).message, /No channel Nope/);
    const bigJson = await signal(`path=${rec.path}&format=json`);
    assert.equal(bigJson.status, 400);
    assert.equal((await signal('path=sub-99/eeg/none.edf')).status, 404);
  });

  it('obeys visibility: private windows for their owner only, 404 for others', async () => {
    const p = `path=${encodeURIComponent(sources.edf!)}&start=0&duration=0.5&channels=A1`;
    assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`)).status, 404);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`, stranger.key)).status, 404);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`, owner.key)).status, 200);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/events?path=${encodeURIComponent(sources.edf!)}`)).status, 404);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/events?path=${encodeURIComponent(sources.edf!)}`, owner.key)).status, 200);
  });

  it(`stops serving a dataset made private through another process within ${LOOKUP_TTL_MS} ms (the look-up cache's lifetime)`, async () => {
    const p = `path=${encodeURIComponent(sources.edf!)}&start=0&duration=0.5&channels=A1`;
    const setVisibility = (visibility: 'public' | 'private') => server.deps.db.updateTable('datasets').set({ visibility }).where('id', '=', privateId).execute();
    await setVisibility('public');
    try {
      assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`)).status, 200);
      // A write straight to the table, as another process's would be: no hook of this server runs.
      await setVisibility('private');
      server.clock.advance(LOOKUP_TTL_MS + 1);
      assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`)).status, 404);
      assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`, owner.key)).status, 200);
    } finally {
      await setVisibility('private');
    }
  });

  it('stops serving a dataset made private through this server at once, whatever the look-up cache holds', async () => {
    const p = `path=${encodeURIComponent(sources.edf!)}&start=0&duration=0.5&channels=A1`;
    await server.deps.db.updateTable('datasets').set({ visibility: 'public' }).where('id', '=', privateId).execute();
    try {
      assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`)).status, 200);
      const admin = await createAccount(server, { role: 'admin' }); // only an administrator makes a public dataset private
      const patched = await admin.api(`/datasets/${privateId}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(patched.status, 200, await patched.clone().text());
      assert.equal((await apiFetch(server, `/datasets/${privateId}/signal?${p}`)).status, 404);
    } finally {
      await server.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', privateId).execute();
    }
  });

  it('reads a recording converted anew at once: the new store\'s samples, never the ones decoded before', async () => {
    const file = 'sub-01/eeg/sub-01_task-rest_eeg.edf';
    const repo = makeRepo([{ bytes: constantEdf(3000), to: file }]);
    dirs.push(repo);
    const fresh = await convertedDataset(server, owner.user.id, repo);
    const first = async () => {
      const res = await apiFetch(server, `/datasets/${fresh}/signal?path=${encodeURIComponent(file)}&start=0&duration=1&format=json&dtype=float64`);
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { data: number[][] }).data[0]![0]!;
    };
    assert.ok(Math.abs((await first()) - physical(3000)) < 1e-6);
    writeFileSync(path.join(repo, file), constantEdf(-9000));
    gitIn(repo, 'commit', '-q', '-am', 'new samples');
    await reconvertedDataset(server, fresh, repo);
    // The clock has not moved: only the conversion's hook can have made this server look the recording up again.
    assert.ok(Math.abs((await first()) - physical(-9000)) < 1e-6);
  });

  it('resamples with an anti-aliasing filter: passband within 0.1 dB, aliases below -60 dB', async () => {
    const rec = await recording(sources.sine!);
    const res = await signal(`path=${rec.path}&rate=100&dtype=float64&start=10&duration=40`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-nds-rate'), '100');
    assert.equal(res.headers.get('x-nds-start-sample'), '1000');
    const { shape, data } = readNpy(new Uint8Array(await res.arrayBuffer()));
    assert.deepEqual(shape, [2, 4000]);
    const amplitude = 30000 * (2000 / 65535); // the digital amplitude in µV
    const row = (r: number) => data.subarray(r * 4000, (r + 1) * 4000);
    // Amplitude of the 20 Hz sine by projection on sin/cos at its frequency, absolute time t = 10 + i / 100.
    const project = (x: Float64Array | Float32Array, f: number) => {
      let s = 0;
      let c = 0;
      for (let i = 0; i < x.length; i++) {
        const t = 10 + i / 100;
        s += x[i]! * Math.sin(2 * Math.PI * f * t);
        c += x[i]! * Math.cos(2 * Math.PI * f * t);
      }
      return (2 * Math.hypot(s, c)) / x.length;
    };
    const passDb = 20 * Math.log10(project(row(0), 20) / amplitude);
    assert.ok(Math.abs(passDb) < 0.1, `20 Hz passes at ${passDb.toFixed(4)} dB`);
    // The 80 Hz sine has no place below 50 Hz: whatever is left is alias (at 20 Hz) and leakage.
    const rms = Math.sqrt(Array.from(row(1)).reduce((s, v) => s + v * v, 0) / 4000);
    const aliasDb = 20 * Math.log10((rms * Math.SQRT2) / amplitude);
    assert.ok(aliasDb < -60, `80 Hz leaves ${aliasDb.toFixed(1)} dB`);
  });
});
