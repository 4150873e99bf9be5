/**
 * Output of client commands: data to stdout (tables for people, `--json` for scripts), messages to stderr. What
 * people read passes through terminalSafe; `--json` stays exact (JSON escapes controls itself).
 */
import { terminalSafe } from './terminal-text.js';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A plain text table with a header row; columns padded to their widest cell. */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  const cells = rows.map((r) => columns.map((c) => formatCell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  process.stdout.write(`${line(columns.map((c) => c.toUpperCase()))}\n`);
  for (const row of cells) process.stdout.write(`${line(row)}\n`);
}

function formatCell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return terminalSafe(v.join(','), { oneLine: true });
  if (typeof v === 'object') return JSON.stringify(v);
  return terminalSafe(String(v), { oneLine: true });
}

export function info(message: string): void {
  process.stderr.write(`${terminalSafe(message)}\n`);
}
