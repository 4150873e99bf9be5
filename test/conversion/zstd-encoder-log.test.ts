/**
 * `nds serve` says at start which zstd encoder compresses the Zarr chunks in this process (native zstd-napi,
 * or the WebAssembly fallback) and on which Node.js, so an operator running a Node.js the native module was
 * not built for sees the fallback in the log.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { zstdEncoder } from '../../src/formats/zarr/chunk-codec.js';
import { freePort } from '../support/test-server.js';

describe('nds serve logs its zstd encoder', () => {
  it('the listening line names the encoder this Node.js loads', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nds-serve-log-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['bin/nds.js', 'serve'], {
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let out = '';
        let err = '';
        const timer = setTimeout(() => reject(new Error(`no listening line in 60 s: ${out} ${err}`)), 60_000);
        child.stderr.on('data', (d) => (err += d));
        child.once('close', (code) => reject(new Error(`nds serve exited (${code}): ${err}`)));
        child.stdout.on('data', (d) => {
          out += d;
          for (const line of out.split('\n')) {
            if (!line.includes('nds is listening')) continue;
            clearTimeout(timer);
            resolve(JSON.parse(line));
          }
        });
      });
      const expected = (await zstdEncoder()).kind;
      assert.equal(listening.zstd_encoder, expected);
      assert.equal(listening.node, process.version);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('close', resolve)));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
