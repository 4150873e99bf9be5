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
