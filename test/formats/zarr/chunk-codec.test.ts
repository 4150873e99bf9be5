import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { Zstd } from 'numcodecs';
import { ZstdChunkCodec, zstdEncoder } from '../../../src/formats/zarr/chunk-codec.js';

// The decoder zarrita uses: whatever encoder wrote a chunk, a Zarr reader must get the same bytes back.
const decoder = Zstd.fromConfig({ level: 1 });

function sampleChunk(): Uint8Array {
  const samples = new Int16Array(64 * 4096);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(800 * Math.sin(i / 37) + ((i * 7919) % 61) - 30);
  return new Uint8Array(samples.buffer);
}

describe('ZstdChunkCodec', () => {
  for (const prefer of ['native', 'wasm'] as const) {
    it(`writes frames a numcodecs decoder reads back exactly (${prefer} preferred)`, async () => {
      const chunk = sampleChunk();
      const encoded = await new ZstdChunkCodec(1, prefer).encode(chunk);
      assert.ok(encoded.length < chunk.length, 'the chunk was compressed');
      assert.deepEqual(new Uint8Array(await decoder.decode(encoded)), chunk);
    });
  }

  it('keeps an encoded chunk intact until it is released, then reuses its memory', async () => {
    // The writer holds up to 8 encoded chunks while they are written: later encodes must not touch them.
    const codec = new ZstdChunkCodec();
    const chunk = sampleChunk();
    const first = await codec.encode(chunk);
    const copy = first.slice();
    const other = sampleChunk().reverse();
    const second = await codec.encode(other);
    assert.deepEqual(first, copy);
    assert.deepEqual(new Uint8Array(await decoder.decode(second)), other);
    codec.release(first);
    const third = await codec.encode(other);
    if ((await zstdEncoder()).kind === 'native') assert.equal(third.buffer, first.buffer, 'the released buffer serves the next chunk');
    assert.deepEqual(new Uint8Array(await decoder.decode(third)), other);
  });

  it('uses the native encoder when zstd-napi is installed, WebAssembly when asked', async () => {
    let installed = true;
    try {
      createRequire(import.meta.url).resolve('zstd-napi');
    } catch {
      installed = false;
    }
    assert.equal((await zstdEncoder()).kind, installed ? 'native' : 'wasm');
    assert.equal((await zstdEncoder('wasm')).kind, 'wasm');
  });
});
