import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/** Structured JSON logs on stdout. Credentials are redacted wherever they might appear. */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'nds' },
      redact: {
        paths: ['authorization', 'cookie', 'api_key', 'password', 'device_code', 'code', 'token', '*.authorization', '*.api_key', '*.password', '*.token'],
        censor: '[redacted]',
      },
    },
    destination as pino.DestinationStream | undefined,
  );
}
