#!/usr/bin/env node
/**
 * Writes test-durations.json (what test-groups.mjs balances the groups by) from the output of a full
 * `npm test` run (the spec reporter): each top-level suite's or test's time, added to the file that declares it
 * (matched by its name, from `describe(` and `it(`/`test(` at the start of a line). Only the first embedded PGlite pass
 * is read (the lines before "== embedded PGlite pass"). Files not in the run keep their old figure.
 *
 * Usage: npm test 2>&1 | tee test.log; node test/support/measure-durations.mjs test.log
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const log = readFileSync(process.argv[2] ?? '/dev/stdin', 'utf8');
const pass = log.split('== embedded PGlite pass')[0];

/** Top-level names a file declares: the first string argument of describe/it/test calls at column 0. */
const owners = new Map();
const testFiles = readdirSync(path.join(root, 'test'), { recursive: true }).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f.split(path.sep).join('/')}`);
for (const file of testFiles) {
  const source = readFileSync(path.join(root, file), 'utf8');
  for (const m of source.matchAll(/^(?:describe|it|test)\(\s*(['"`])((?:\\.|(?!\1).)*)\1/gm)) {
    const name = m[2].replace(/\\(.)/g, '$1');
    owners.set(name, [...(owners.get(name) ?? []), file]);
  }
}

/** Top-level results of the pass: TAP (`ok 3 - name` then `duration_ms:` indented by two, Node 20 without a terminal) or spec (`✔ name (12.3ms)`). */
const results = [
  ...[...pass.matchAll(/^(?:not )?ok \d+ - (.*)\n  ---\n  duration_ms: ([\d.]+)/gm)].map((m) => [m[1], Number(m[2]) / 1000]),
  ...[...pass.matchAll(/^[✔✖﹣] (.*) \(([\d.]+)ms\)/gm)].map((m) => [m[1], Number(m[2]) / 1000]),
];
const seconds = {};
let unmatched = 0;
for (const [name, s] of results) {
  const files = owners.get(name.replace(/ # .*$/, ''));
  if (!files) {
    unmatched++;
    continue;
  }
  for (const f of files) seconds[f] = (seconds[f] ?? 0) + s / files.length;
}

const file = path.join(here, 'test-durations.json');
const old = JSON.parse(readFileSync(file, 'utf8'));
const merged = { ...old };
for (const [f, s] of Object.entries(seconds)) merged[f] = Math.round(s * 10) / 10;
const sorted = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(file, JSON.stringify(sorted, null, 1) + '\n');
console.error(`${Object.keys(seconds).length} files measured, ${unmatched} top-level results without a declaring file`);
