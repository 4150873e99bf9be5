/** Running the Python client (clients/python) from a test, with Debian's Python and nothing of the caller's environment. */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const python = '/usr/bin/python3';
export const clientDir = path.resolve(import.meta.dirname, '../../clients/python');

/** Runs `code` with the client importable, no home folder and only the caller's PATH. */
export function runPython(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', code], { env: { PATH: process.env.PATH, PYTHONPATH: clientDir, HOME: '/nonexistent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (c) => resolve({ code: c, stdout, stderr }));
  });
}
