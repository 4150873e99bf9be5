/**
 * Holds the dependency direction of docs/architecture.md over `src/`: the ranks are read from the document
 * itself, so the picture a newcomer reads and the rule the code obeys are one table.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readImportGraph } from '../support/import-graph.js';
import { checkLayers, parseRanks, type LayerRules } from '../support/layer-rules.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function nds(): LayerRules {
  return {
    ranks: parseRanks(readFileSync(path.join(repo, 'docs/architecture.md'), 'utf8')),
    httpUnit: 'http/',
    httpPackages: ['hono', '@hono/'],
    leaves: ['core/errors.ts'],
  };
}

describe('the import graph of src/', () => {
  it('obeys the ranks of docs/architecture.md: no upward import, no cycle, no Hono below http/', () => {
    const problems = checkLayers(readImportGraph(path.join(repo, 'src')), nds());
    assert.deepEqual(problems, []);
  });
});

describe('the layer check itself', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nds-layers-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const rules: LayerRules = {
    ranks: parseRanks(['## Ranks', '| Rank | Units |', '|---|---|', '| 0 | `signals/` |', '| 1 | `core/` |', '| 2 | `accounts/`, `datasets/` |', '| 3 | `http/` |', '| 4 | `app.ts` |', '| — | `web/viewer/` |'].join('\n')),
    httpUnit: 'http/',
    httpPackages: ['hono', '@hono/'],
    leaves: ['core/errors.ts'],
  };
  const tree = (files: Record<string, string>) => {
    const dir = mkdtempSync(path.join(root, 't-'));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    return readImportGraph(dir);
  };
  const clean = {
    'core/errors.ts': 'export class NdsError extends Error {}\n',
    'core/config.ts': "import { NdsError } from './errors.js';\nexport const c = NdsError;\n",
    'accounts/users.ts': "import type { NdsError } from '../core/errors.js';\nexport type U = NdsError;\n",
    'datasets/list.ts': "import type { U } from '../accounts/users.js';\nexport type L = U;\n",
    'http/auth.ts': "import { Hono } from 'hono';\nimport type { U } from '../accounts/users.js';\nexport type A = U | Hono;\n",
    'app.ts': "import type { A } from './http/auth.js';\nexport const x = (await import('./datasets/list.js'));\n",
    'web/viewer/main.ts': "import * as zarr from 'zarrita';\nimport './draw.js';\nexport const z = zarr;\n",
    'web/viewer/draw.ts': 'export {};\n',
  };

  it('passes a tree that obeys its ranks', () => {
    assert.deepEqual(checkLayers(tree(clean), rules), []);
  });

  it('names the file and line of an upward import, type-only ones included', () => {
    const problems = checkLayers(tree({ ...clean, 'accounts/users.ts': "import type { NdsError } from '../core/errors.js';\nimport type { A } from '../http/auth.js';\nexport type U = NdsError | A;\n" }), rules);
    assert.ok(problems.some((p) => p.startsWith('accounts/users.ts:2: imports http/auth.ts upwards')), problems.join('\n'));
  });

  it('names a cycle between units of one rank and a cycle between files', () => {
    const problems = checkLayers(tree({ ...clean, 'accounts/users.ts': "import type { L } from '../datasets/list.js';\nexport type U = L;\n" }), rules);
    assert.ok(problems.some((p) => p.startsWith('cycle between units:') && p.includes('accounts/ -> datasets/ (accounts/users.ts:1)')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('cycle between files:') && p.includes('datasets/list.ts:1 -> accounts/users.ts')), problems.join('\n'));
  });

  it('lets browser code and the server share rank 0, which imports nothing above itself', () => {
    const shared = { ...clean, 'signals/scale.ts': 'export const s = 1;\n', 'web/viewer/draw.ts': "import { s } from '../../signals/scale.js';\nexport const d = s;\n", 'datasets/list.ts': "import { s } from '../signals/scale.js';\nexport const l = s;\n" };
    assert.deepEqual(checkLayers(tree(shared), rules), []);
    const problems = checkLayers(tree({ ...shared, 'signals/scale.ts': "import '../core/config.js';\nexport const s = 1;\n" }), rules);
    assert.ok(problems.some((p) => p.startsWith('signals/scale.ts:1: imports core/config.ts upwards')), problems.join('\n'));
  });

  it('finds a lazily imported module and Hono below the HTTP glue', () => {
    const problems = checkLayers(tree({ ...clean, 'datasets/list.ts': "export const l = () => import('../app.js');\nexport type { Context } from 'hono';\n" }), rules);
    assert.ok(problems.some((p) => p.startsWith('datasets/list.ts:1: imports app.ts upwards')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('datasets/list.ts:2: imports hono')), problems.join('\n'));
  });

  it('keeps browser code and the error vocabulary to themselves, and every file in a unit', () => {
    const problems = checkLayers(tree({ ...clean, 'web/viewer/draw.ts': "import '../../core/config.js';\n", 'core/errors.ts': "import './config.js';\n", 'loose.ts': 'export {};\n' }), rules);
    assert.ok(problems.some((p) => p.startsWith('web/viewer/draw.ts:1: web/viewer/ and core/ must not import each other')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('core/errors.ts:1: core/errors.ts must import nothing of the project')), problems.join('\n'));
    assert.ok(problems.includes('loose.ts: belongs to no ranked unit'), problems.join('\n'));
  });
});
