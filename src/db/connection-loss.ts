/**
 * What a lost database connection looks like, and how it is answered. node-postgres reports a connection
 * that died (the server restarted, an administrator terminated the backend, the network dropped it) in
 * several ways; `isConnectionLoss` recognises all of them, so the pool can replace the connection and the
 * query can be retried or answered 503 instead of 500.
 */
import { NdsError } from '../core/errors.js';

/** Seconds a client is told to wait (`Retry-After`) when the database cannot answer. */
export const DATABASE_RETRY_AFTER_S = 1;

/**
 * SQLSTATEs of a connection the server ended: 57P01 admin_shutdown (pg_terminate_backend, fast shutdown),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down); class 08 connection_exception.
 */
const LOST_CODES = /^(57P0[123]|08...)$/;

/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** node-postgres's own messages for a dead or unusable connection (it sets no code on them). */
const LOST_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
];

/** True when `err` says the connection to the database is gone or could not be made (not a query's own fault). */
export function isConnectionLoss(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (LOST_CODES.test(code) || SOCKET_CODES.has(code))) return true;
  return typeof message === 'string' && LOST_MESSAGES.some((m) => message.startsWith(m));
}

/** The answer to a request whose database work could not be done (or not safely repeated): 503, retry soon. */
export function databaseUnavailable(cause: unknown): NdsError<'service_unavailable'> {
  return new NdsError('service_unavailable', {
    message: 'The database cannot answer right now; try again in a moment.',
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
    cause,
  });
}

/** Seconds a client is told to wait when a statement ran past DATABASE_STATEMENT_TIMEOUT_MS (the database is busy). */
export const STATEMENT_TIMEOUT_RETRY_AFTER_S = 5;

/** True when the server cancelled a statement that ran past `statement_timeout` (SQLSTATE 57014 query_canceled). */
export function isStatementTimeout(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === '57014' && typeof message === 'string' && message.includes('statement timeout');
}

/** The answer to a request whose statement ran too long: 503, retry in a few seconds. */
export function statementTimedOut(cause: unknown): NdsError<'service_unavailable'> {
  return new NdsError('service_unavailable', {
    message: 'The database is too busy to answer this now; try again in a few seconds.',
    headers: { 'Retry-After': String(STATEMENT_TIMEOUT_RETRY_AFTER_S) },
    cause,
  });
}
