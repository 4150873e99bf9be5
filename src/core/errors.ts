/**
 * The one error vocabulary of nds: every error the outside world sees has a stable snake_case code,
 * an HTTP status, a body shape and a safe default message, defined here and nowhere else.
 * This file imports nothing from nds, so any layer may throw these errors.
 */

/**
 * Body shapes (docs/api.md):
 * - `general`: `{error, message, details: []}`
 * - `coded`: `{error, message}` (device-flow and key routes)
 * - `token`: `{error, reason, message}` (terminal answers of the device token poll; HTTP 400)
 */
export type ErrorShape = 'general' | 'coded' | 'token';

interface ErrorSpec {
  status: number;
  shape: ErrorShape;
  message: string;
}

const catalog = {
  // General
  bad_request: { status: 400, shape: 'general', message: 'The request is malformed.' },
  validation_failed: { status: 400, shape: 'general', message: 'The request body or query is not valid.' },
  unauthorized: { status: 401, shape: 'general', message: 'A valid API key is required: send Authorization: Bearer <key>.' },
  session_required: { status: 401, shape: 'general', message: 'Sign in first.' },
  forbidden: { status: 403, shape: 'general', message: 'You are not allowed to do this.' },
  foreign_origin: { status: 403, shape: 'general', message: 'This request must come from the service\'s own pages.' },
  admin_required: { status: 403, shape: 'general', message: 'This needs an administrator.' },
  owner_required: { status: 403, shape: 'general', message: 'Only the owner may do this.' },
  not_found: { status: 404, shape: 'general', message: 'Not found.' },
  user_not_found: { status: 404, shape: 'general', message: 'No such user.' },
  dataset_not_found: { status: 404, shape: 'general', message: 'No such dataset.' },
  version_not_found: { status: 404, shape: 'general', message: 'No such version.' },
  upload_not_found: { status: 404, shape: 'general', message: 'No such multipart upload: it was completed, aborted, or left unfinished too long.' },
  upload_incomplete: { status: 409, shape: 'general', message: 'The multipart upload lacks parts; send them before completing it.' },
  request_not_found: { status: 404, shape: 'general', message: 'No such publication request.' },
  annotation_not_found: { status: 404, shape: 'general', message: 'No such annotation.' },
  method_not_allowed: { status: 405, shape: 'general', message: 'Method not allowed.' },
  conflict: { status: 409, shape: 'general', message: 'The request conflicts with the current state.' },
  kind_changed: { status: 409, shape: 'general', message: 'The account kind was changed by another request; read it again and retry.' },
  username_taken: { status: 409, shape: 'general', message: 'That username is taken.' },
  email_taken: { status: 409, shape: 'general', message: 'That email belongs to another account.' },
  version_exists: { status: 409, shape: 'general', message: 'That version number is already used.' },
  version_unchanged: { status: 409, shape: 'general', message: 'These files are exactly those of the latest version; no version was made.' },
  content_missing: { status: 409, shape: 'general', message: 'Some listed content is not in the object store yet.' },
  publication_pending: { status: 409, shape: 'general', message: 'A publication request is already pending.' },
  revision_conflict: { status: 409, shape: 'general', message: 'The annotations changed since the revision you based this on; read them again and retry.' },
  content_mismatch: { status: 400, shape: 'general', message: 'The uploaded content does not match its declared size, SHA-256 or CRC-32; nothing was stored.' },
  signature_invalid: { status: 403, shape: 'general', message: 'The signed URL or object credential is not valid, has expired, or does not cover this object.' },
  sandbox_required: { status: 403, shape: 'general', message: 'Complete the sandbox training first (nds sandbox status).' },
  storage_quota_exceeded: { status: 403, shape: 'general', message: "This would take the account's datasets past their storage quota; delete a dataset or ask an administrator for more room." },
  upload_access_required: { status: 403, shape: 'general', message: 'Uploading to real datasets needs an approved account; ask an administrator for upload access.' },
  not_publishable: { status: 409, shape: 'general', message: 'This dataset cannot be published in its current state.' },
  publication_not_pending: { status: 409, shape: 'general', message: 'That publication request was already decided.' },
  doi_not_minted: { status: 409, shape: 'general', message: 'This dataset has no DOI yet; mint a concept DOI first.' },
  metadata_incomplete: { status: 422, shape: 'general', message: 'The dataset metadata is incomplete.' },
  range_not_satisfiable: { status: 416, shape: 'general', message: 'The requested range is not satisfiable.' },
  length_required: { status: 411, shape: 'general', message: 'This request must say its Content-Length.' },
  payload_too_large: { status: 413, shape: 'general', message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, shape: 'general', message: 'This route does not take a body of that type.' },
  rate_limited: { status: 429, shape: 'general', message: 'Too many requests; wait and try again.' },
  login_code_invalid: { status: 401, shape: 'general', message: 'That code is not right, or no code was sent to that address (a code lasts 10 minutes and 5 tries). Check it, or ask for a new one.' },
  setup_link_invalid: { status: 403, shape: 'general', message: 'That setup link is not right. Use the link nds serve printed, or run nds admin bootstrap.' },
  setup_link_used: { status: 410, shape: 'general', message: 'That setup link was already used: the service has its owner. Sign in instead.' },
  setup_link_expired: { status: 410, shape: 'general', message: 'That setup link has expired. Restart nds serve for a new one, or run nds admin bootstrap.' },
  invalid_credentials: { status: 401, shape: 'general', message: 'Wrong username, email or password.' },
  link_invalid: { status: 410, shape: 'general', message: 'That link is not valid: it was already used, has expired, or was never sent. Ask for a new one.' },
  internal_error: { status: 500, shape: 'general', message: 'Something went wrong on our side.' },
  not_configured: { status: 503, shape: 'general', message: 'This feature is not configured on this server.' },
  service_unavailable: { status: 503, shape: 'general', message: 'The service cannot answer right now; try again in a moment.' },
  upstream_failed: { status: 502, shape: 'general', message: 'An upstream service failed.' },
  repository_unavailable: { status: 503, shape: 'general', message: "The node that holds this dataset's git repository is not answering; try again later." },

  // Device-flow and key routes (docs/api.md)
  device_code_unknown: { status: 404, shape: 'coded', message: 'That code was not found. Check it and try again.' },
  device_code_expired: { status: 410, shape: 'coded', message: 'That code has expired. Start the sign-in again.' },
  device_code_used: { status: 409, shape: 'coded', message: 'That code was already used.' },
  device_code_denied: { status: 409, shape: 'coded', message: 'That sign-in was declined in the browser.' },
  account_pending: { status: 403, shape: 'coded', message: 'Verify your email address before you continue.' },
  account_revoked: { status: 403, shape: 'coded', message: 'This account\'s access has been revoked.' },
  identity_conflict: { status: 403, shape: 'coded', message: 'This account shares an identity with another account; contact an administrator.' },
  service_account: { status: 403, shape: 'coded', message: 'Service and test accounts cannot sign in this way; an owner mints their keys.' },
  person_account: { status: 403, shape: 'coded', message: 'A person mints their own keys; this route is for service and test accounts.' },
  too_many_sandbox_datasets: { status: 409, shape: 'coded', message: 'This account already holds the most sandbox datasets it may; reset the sandbox or delete one first.' },
  too_many_keys: { status: 409, shape: 'coded', message: 'This account already holds 25 live keys; revoke one first.' },
  key_not_found: { status: 404, shape: 'coded', message: 'Key not found or already revoked.' },
  bearer_required: { status: 400, shape: 'coded', message: 'Only a bearer API key can revoke itself.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof catalog;

/** RFC 8628 section 3.5 token-poll errors (HTTP 400, field `error`). */
export type TokenPollError = 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied' | 'invalid_grant';

export interface NdsErrorOptions {
  /** A sentence for a person; defaults to the catalog's message. */
  message?: string;
  /** Extra sentences (validation problems, missing paths...). */
  details?: string[];
  cause?: unknown;
  /** Extra headers of the answer, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /** Extra fields merged into the body (e.g. `missing: [...]`). */
  extra?: Record<string, unknown>;
  /**
   * What only one account (and administrators) may read: its own numbers, in an error another caller may get
   * too (a member told that the owner's storage quota is full is not told the owner's usage). Replaces
   * `details` and adds to `extra` for that reader.
   */
  readableBy?: { userId: number; details: string[]; extra: Record<string, unknown> };
}

/** Who an answer is for, as far as `readableBy` cares. */
export interface Reader {
  id: number;
  role: string;
}

export class NdsError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  readonly shape: ErrorShape;
  readonly details: string[];
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  readonly readableBy: NdsErrorOptions['readableBy'];

  constructor(code: C, options: NdsErrorOptions = {}) {
    super(options.message ?? catalog[code].message, { cause: options.cause });
    this.name = 'NdsError';
    this.code = code;
    this.status = catalog[code].status;
    this.shape = catalog[code].shape;
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
    this.readableBy = options.readableBy;
  }

  /** The details `reader` may be told (with `readableBy`, more for that account and administrators). */
  detailsFor(reader?: Reader): string[] {
    return this.#readable(reader) ? this.readableBy!.details : this.details;
  }

  /** The JSON body of the answer to `reader` (none: an anonymous caller), in the shape of docs/api.md. */
  toBody(reader?: Reader): Record<string, unknown> {
    const extra = this.#readable(reader) ? { ...this.extra, ...this.readableBy!.extra } : this.extra;
    if (this.shape === 'coded') return { error: this.code, message: this.message, ...extra };
    return { error: this.code, message: this.message, details: this.detailsFor(reader), ...extra };
  }

  #readable(reader: Reader | undefined): boolean {
    return this.readableBy !== undefined && reader !== undefined && (reader.id === this.readableBy.userId || reader.role === 'admin');
  }
}

/** A terminal or pending answer of `POST /auth/device/token` (always HTTP 400). */
export class TokenPollRefusal extends Error {
  readonly error: TokenPollError;
  readonly reason: ErrorCode | undefined;

  constructor(error: TokenPollError, reason?: ErrorCode, message?: string) {
    super(message ?? (reason ? catalog[reason].message : pollMessages[error]));
    this.name = 'TokenPollRefusal';
    this.error = error;
    this.reason = reason;
  }

  toBody(): Record<string, unknown> {
    return this.reason === undefined
      ? { error: this.error, message: this.message }
      : { error: this.error, reason: this.reason, message: this.message };
  }
}

const pollMessages: Record<TokenPollError, string> = {
  authorization_pending: 'Waiting for the code to be approved in the browser.',
  slow_down: 'Polling too fast; wait longer between polls.',
  expired_token: 'The code expired.',
  access_denied: 'The sign-in was refused.',
  invalid_grant: 'The code is not valid.',
};

export function isNdsError<C extends ErrorCode>(err: unknown, code?: C): err is NdsError<C> {
  return err instanceof NdsError && (code === undefined || err.code === code);
}

export function errorSpec(code: ErrorCode): Readonly<ErrorSpec> {
  return catalog[code];
}
