import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';
import { NDS_VERSION } from './release.js';
import { currentRequest } from './request-context.js';

export type { Logger };

/** Which nds program writes the log: `serve`, `gateway`, `worker`, or a command (`cli`). */
export type ProcessKind = 'serve' | 'gateway' | 'worker' | 'cli';

/**
 * Structured JSON logs on stdout. Every line names its host, process id, program and release; a line written
 * while a request is served names the request (`requestId`, also answered as `X-Request-Id`). Credentials
 * are redacted wherever they might appear.
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream, kind: ProcessKind = 'serve'): Logger {
  return pino(
    {
      level,
      base: { service: 'nds', kind, version: NDS_VERSION, hostname: hostname(), pid: process.pid },
      mixin: () => {
        const request = currentRequest();
        return request ? { requestId: request.requestId } : {};
      },
      redact: {
        paths: ['authorization', 'cookie', 'api_key', 'password', 'device_code', 'code', 'token', '*.authorization', '*.api_key', '*.password', '*.token'],
        censor: '[redacted]',
      },
    },
    destination as pino.DestinationStream | undefined,
  );
}

/**
 * Makes a long-running process (serve, worker, gateway) end on an error nothing handled, as Node.js does by
 * default, but with the error in the JSON log first: Node's own report goes to stderr as plain text, where a
 * log pipeline reading the JSON lines would miss why the process stopped. Exit code 1, as Node's.
 */
export function exitOnUnhandledErrors(log: Logger, proc: NodeJS.Process = process): void {
  const stop = (what: string) => (err: unknown) => {
    log.fatal({ err }, `${what}: nds stops (a fault of nds; the error says where)`);
    // Also where Node.js would have put it, for a terminal and for LOG_LEVEL=silent.
    proc.stderr.write(`${what}: nds stops\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    proc.exit(1);
  };
  proc.on('unhandledRejection', stop('a promise was rejected and nothing handled it'));
  proc.on('uncaughtException', stop('an exception was thrown and nothing caught it'));
}
