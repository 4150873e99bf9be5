/**
 * Converts a BIDS tree in a child process (convert-child.ts) under a heap limit and a deadline: a conversion
 * that runs out of memory or blocks its event loop is seen as the child's death, not the test runner's.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FailureCode } from '../../../src/formats/conversion-errors.js';

const child = fileURLToPath(new URL('./convert-child.ts', import.meta.url));

/** What convert-child.ts printed, when it finished. */
export interface ChildResult {
  stores: number;
  failures: { code: FailureCode; reason: string }[];
  ms: number;
  maxRssMb: number;
}

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  result: ChildResult | undefined;
  stderr: string;
  ms: number;
}

export function convertInChild(root: string, out: string, { heapMb, timeoutMs }: { heapMb: number; timeoutMs: number }): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const proc = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', child, root, out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill('SIGKILL');
    }, timeoutMs);
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').at(-1);
      resolve({ code, signal, timedOut, result: line ? (JSON.parse(line) as ChildResult) : undefined, stderr: stderr.slice(-2000), ms: Date.now() - started });
    });
  });
}

/** The child's result, or a failed assertion saying how it died. */
export function finished(outcome: ChildOutcome): ChildResult {
  assert.ok(!outcome.timedOut, `the conversion was still running after ${outcome.ms} ms`);
  const died = outcome.stderr.split('\n').find((l) => /heap|memory/i.test(l)) ?? outcome.stderr;
  assert.ok(outcome.code === 0 && outcome.result, `the converter died (${outcome.signal ?? outcome.code}): ${died}`);
  return outcome.result;
}
