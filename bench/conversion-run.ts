/** One conversion in its own process (so its peak RSS is its own): prints a JSON line with the figures. */
import { rm } from 'node:fs/promises';
import { stat } from 'node:fs/promises';
import { convertFileToFolder } from '../src/conversion/convert-to-folder.js';
import { execFileSync } from 'node:child_process';

const [file, out] = process.argv.slice(2) as [string, string];
await rm(out, { recursive: true, force: true });
const started = performance.now();
const result = await convertFileToFolder(file, out);
const seconds = (performance.now() - started) / 1000;
if (result.failures.length > 0) throw new Error(JSON.stringify(result.failures));
const storeBytes = Number(execFileSync('du', ['-sb', out]).toString().split('\t')[0]);
process.stdout.write(`${JSON.stringify({ seconds, sourceBytes: (await stat(file)).size, storeBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
