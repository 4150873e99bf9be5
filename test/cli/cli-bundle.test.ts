/**
 * `bin/nds.js` runs the CLI from an esbuild bundle of the sources (decision 0009): a command starts in about
 * 0.1 s instead of 0.3 s through tsx. What it must keep: the same answers as the sources run through tsx,
 * a bundle rebuilt for the sources at hand, and stack traces that name the TypeScript files.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { nds } from '../support/cli.js';

const cache = path.resolve('node_modules/.cache/nds');

describe('the CLI bundle', () => {
  it('answers as the sources do, from a bundle with its source map', async () => {
    const bundled = await nds(['--version'], {});
    const fromSources = await nds(['--version'], { NDS_CLI_BUNDLE: 'off' });
    assert.equal(bundled.code, 0);
    assert.equal(bundled.stdout, fromSources.stdout);
    const newest = readdirSync(cache)
      .filter((n) => n.startsWith('cli-') && !n.endsWith('.tmp'))
      .map((n) => path.join(cache, n))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    assert.ok(newest && existsSync(path.join(newest, 'main.mjs')) && existsSync(path.join(newest, 'main.mjs.map')), 'a bundle with its source map');
  });

  it('names the TypeScript source in a stack trace (NDS_DEBUG)', async () => {
    const r = await nds(['migrate'], { NDS_DEBUG: '1', DATABASE_URL: 'nosuch://' });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /src\/core\/config\.ts:\d+/, r.stderr);
  });
});
