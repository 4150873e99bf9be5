#!/usr/bin/env node
/**
 * Writes test-durations.json and test-durations-postgres.json (what test-groups.mjs balances each pass's groups
 * by) from the output of a full `npm test` run (the spec reporter): each top-level suite's or test's time, added
 * to the file that declares it (matched by its name, from `describe(` and `it(`/`test(` at the start of a line).
 * The embedded PGlite pass (the lines before "== embedded PGlite pass") gives the first, the PostgreSQL pass (from
 * "== again on the PostgreSQL server" on) the second. Files not in a pass keep their old figure.
 *
 * Usage: npm test 2>&1 | tee test.log; node test/support/measure-durations.mjs test.log
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const log = readFileSync(process.argv[2] ?? '/dev/stdin', 'utf8');

/** Top-level names a file declares: the first string argument of describe/it/test calls at column 0. */
const owners = new Map();
/**
 * Names made from a template, as in `for (const variant of storeVariants) describe(\`... ${variant.name}\`)`: the
 * template with each `${...}` matching any text (such calls are indented, inside their loop).
 */
const templates = [];
const escape = (text) => text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
const testFiles = readdirSync(path.join(root, 'test'), { recursive: true }).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f.split(path.sep).join('/')}`);
for (const file of testFiles) {
  const source = readFileSync(path.join(root, file), 'utf8');
  for (const m of source.matchAll(/^(?:describe|it|test)\(\s*(['"`])((?:\\.|(?!\1).)*)\1/gm)) {
    const name = m[2].replace(/\\(.)/g, '$1');
    owners.set(name, [...(owners.get(name) ?? []), file]);
  }
  for (const m of source.matchAll(/^\s*describe\(\s*`((?:\\.|[^`])*?\$\{(?:\\.|[^`])*)`/gm)) {
    const parts = m[1].split(/\$\{[^}]*\}/).map((part) => escape(part.replace(/\\(.)/g, '$1')));
    templates.push([new RegExp(`^${parts.join('.+')}$`), file]);
  }
}
/** The files that declare a top-level name. */
const ownersOf = (name) => owners.get(name) ?? templates.filter(([re]) => re.test(name)).map(([, file]) => file);

/** Seconds per declaring file in one pass's output, and how many top-level results no file declares. */
function measure(pass) {
  // Top-level results: TAP (`ok 3 - name` then `duration_ms:` indented by two, Node 20 without a terminal) or spec (`✔ name (12.3ms)`).
  const results = [
    ...[...pass.matchAll(/^(?:not )?ok \d+ - (.*)\n  ---\n  duration_ms: ([\d.]+)/gm)].map((m) => [m[1], Number(m[2]) / 1000]),
    ...[...pass.matchAll(/^[✔✖﹣] (.*) \(([\d.]+)ms\)/gm)].map((m) => [m[1], Number(m[2]) / 1000]),
  ];
  const seconds = {};
  let unmatched = 0;
  for (const [name, s] of results) {
    const files = ownersOf(name.replace(/ # .*$/, ''));
    if (files.length === 0) {
      unmatched++;
      continue;
    }
    for (const f of files) seconds[f] = (seconds[f] ?? 0) + s / files.length;
  }
  return { seconds, unmatched };
}

/** Merges a pass's figures into `name` (one-space JSON, sorted by path). */
function write(name, label, pass) {
  if (pass === undefined) return;
  const { seconds, unmatched } = measure(pass);
  const file = path.join(here, name);
  const old = JSON.parse(readFileSync(file, 'utf8'));
  const merged = { ...old };
  for (const [f, s] of Object.entries(seconds)) merged[f] = Math.round(s * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(file, JSON.stringify(sorted, null, 1) + '\n');
  console.error(`${label}: ${Object.keys(seconds).length} files measured, ${unmatched} top-level results without a declaring file`);
}

write('test-durations.json', 'embedded PGlite pass', log.split('== embedded PGlite pass')[0]);
write('test-durations-postgres.json', 'PostgreSQL pass', log.split('== again on the PostgreSQL server')[1]?.split('== PostgreSQL pass')[0]);
