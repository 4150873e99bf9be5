/**
 * Child process of `convertInChild` (convert-in-child.ts): converts the BIDS tree at argv[2] into argv[3] and
 * prints one JSON line with the outcome: the failures' codes and reasons, and the process's peak RSS.
 */
import { readFileSync } from 'node:fs';
import { convertBidsTreeToFolder } from '../../../src/formats/convert-to-folder.js';

/**
 * The process's peak RSS in MB: VmHWM, that of this program alone (getrusage's maxRSS survives exec, so it
 * counts the parent's RSS at the fork), where /proc has it.
 */
function peakRssMb(): number {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux.
  }
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  return Math.round((hwm === undefined ? process.resourceUsage().maxRSS : Number(hwm)) / 1024);
}

const started = performance.now();
const result = await convertBidsTreeToFolder(process.argv[2]!, process.argv[3]!);
const outcome = {
  stores: result.stores.length,
  failures: result.failures.map((f) => ({ code: f.code, reason: f.reason })),
  ms: Math.round(performance.now() - started),
  maxRssMb: peakRssMb(),
};
process.stdout.write(`${JSON.stringify(outcome)}\n`);
