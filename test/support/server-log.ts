/** The JSON log lines of a test server, kept to be waited on: a test waits for what the server says it did. */
import { PassThrough } from 'node:stream';

export type LogEntry = Record<string, unknown> & { msg?: string };

export interface ServerLog {
  /** Pass as `startTestServer({ logDestination })` (with `LOG_LEVEL` at the level of the lines wanted). */
  destination: PassThrough;
  entries: LogEntry[];
  /** Resolves with the first entry, logged so far or later, for which `match` is true. */
  waitFor(match: (entry: LogEntry) => boolean, what: string, timeoutMs?: number): Promise<LogEntry>;
}

export function serverLog(): ServerLog {
  const destination = new PassThrough();
  const entries: LogEntry[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  destination.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) entries.push(JSON.parse(line) as LogEntry);
    for (const w of [...waiters]) w();
  });
  return {
    destination,
    entries,
    waitFor(match, what, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`the server logged no ${what} within ${timeoutMs} ms`));
        }, timeoutMs);
        function look() {
          const found = entries.find(match);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(look);
          resolve(found);
        }
        waiters.add(look);
        look();
      });
    },
  };
}
