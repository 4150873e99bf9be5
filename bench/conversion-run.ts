/**
 * One conversion in its own process (so its peak RSS is its own): prints a JSON line with the figures.
 * `node --import tsx bench/conversion-run.ts <file> <out>` writes `<out>/<stem>.zarr`; with `--no-store` in
 * place of `<out>`, the same conversion (reading, hashing, encoding) hands its chunks to a sink that drops
 * them, which measures the converter apart from the file system it writes to; files named after `--no-store`
 * are converted the same way in the same process, one after the other (`sourceBytes` is then their sum).
 */
import { execFileSync } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { convertFileToFolder } from '../src/formats/convert-to-folder.js';
import { convertRecording } from '../src/formats/convert-recording.js';

const [file, out, ...more] = process.argv.slice(2) as [string, string, ...string[]];
const started = performance.now();
let storeBytes = 0;
let sourceBytes = 0;
if (out === '--no-store') {
  for (const one of [file, ...more]) {
    await convertRecording({ dataPath: resolve(one), sink: { put: async (_key, bytes) => void (storeBytes += bytes.length) } });
    sourceBytes += (await stat(one)).size;
  }
} else {
  await rm(out, { recursive: true, force: true });
  const result = await convertFileToFolder(file, out);
  if (result.failures.length > 0) throw new Error(JSON.stringify(result.failures));
}
const seconds = (performance.now() - started) / 1000;
if (out !== '--no-store') {
  storeBytes = Number(execFileSync('du', ['-sb', out]).toString().split('\t')[0]);
  sourceBytes = (await stat(file)).size;
}
const cpu = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({ seconds, sourceBytes, storeBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024, userSeconds: cpu.user / 1e6, systemSeconds: cpu.system / 1e6 })}\n`,
);
