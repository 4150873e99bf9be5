#!/usr/bin/env node
/**
 * Packs test files into a few group files for `node --test`, which runs each file it is given in a process of
 * its own: a group runs its test files one after the other in one process, so the sources, the PGlite
 * WebAssembly module and the rest are loaded once per group instead of once per file (about 1.5 s of CPU
 * for a file that starts a server). Groups are balanced by the durations in test-durations.json (longest file
 * first into the least loaded group) and listed longest first, so that the slowest start first.
 *
 * The PostgreSQL pass (NDS_TEST_DB=postgres) takes its figures from test-durations-postgres.json, then from
 * test-durations.json: a file that needs the server (a cluster, a rolling upgrade) is skipped on PGlite and
 * takes no time there, and one that runs on both may take longer on the server.
 *
 * Usage: [NDS_TEST_DB=postgres] node test/support/test-groups.mjs <groups> <output folder> <test files...>
 * Prints the group files' paths, one a line. With <groups> 0, prints the test files themselves.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
/** Seconds a file took alone (measured on a loaded machine: only their proportions matter); a new file counts as this. */
const UNKNOWN_S = 5;

const [groupsArg, outDir, ...files] = process.argv.slice(2);
const groups = Number(groupsArg);
if (!Number.isInteger(groups) || groups < 0 || !outDir) {
  console.error('usage: test-groups.mjs <groups> <output folder> <test files...>');
  process.exit(2);
}
if (groups === 0 || files.length <= 1) {
  for (const f of files) console.log(f);
  process.exit(0);
}

const read = (name) => JSON.parse(readFileSync(path.join(here, name), 'utf8'));
const durations = read('test-durations.json');
const onServer = process.env.NDS_TEST_DB === 'postgres' ? read('test-durations-postgres.json') : {};
const relative = (f) => path.relative(root, path.resolve(f)).split(path.sep).join('/');
const estimate = (f) => onServer[relative(f)] ?? durations[relative(f)] ?? UNKNOWN_S;

const bins = Array.from({ length: Math.min(groups, files.length) }, () => ({ files: [], seconds: 0 }));
for (const f of [...files].sort((a, b) => estimate(b) - estimate(a) || (a < b ? -1 : 1))) {
  const bin = bins.reduce((least, b) => (b.seconds < least.seconds ? b : least));
  bin.files.push(f);
  bin.seconds += estimate(f);
}
bins.sort((a, b) => b.seconds - a.seconds);

mkdirSync(outDir, { recursive: true });
bins.forEach((bin, i) => {
  const file = path.join(outDir, `group-${String(i + 1).padStart(2, '0')}.test.mjs`);
  // A file that fails to load is reported as a failed test of its own, and the group goes on with the next.
  const urls = bin.files.map((f) => pathToFileURL(path.resolve(f)).href);
  const lines = [
    `// ${bin.files.length} test files, about ${Math.round(bin.seconds)} s alone`,
    `import { test } from 'node:test';`,
    `for (const file of ${JSON.stringify(urls, null, 1)}) {`,
    `  try {`,
    `    await import(file);`,
    `  } catch (err) {`,
    `    test(\`loads \${file}\`, () => {`,
    `      throw err;`,
    `    });`,
    `  }`,
    `}`,
  ];
  writeFileSync(file, `${lines.join('\n')}\n`);
  console.log(file);
});
