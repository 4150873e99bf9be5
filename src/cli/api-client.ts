/**
 * The HTTP client of the client commands: base URL and key by the rule of `client/server-identity.ts`
 * (NDS_API_URL and NDS_API_KEY, else what `nds auth login` stored, else the default URL). A refusal from the
 * server becomes a `CliError` carrying the server's message. Answers are read up to a bound
 * (`client/bounded-answer.ts`): past it, a `CliError` naming the bound and the path.
 */
import { AnswerTooLargeError, ERROR_ANSWER_MAX_BYTES, JSON_ANSWER_MAX_BYTES, readBoundedText } from '../client/bounded-answer.js';
import { resolveServerIdentity, type UrlSource } from '../client/server-identity.js';
import { loadClientConfig, type ClientConfig } from '../core/config.js';
import { CliError } from './cli-error.js';
import { ndsCommand } from './command-name.js';

export class ApiError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>) {
    const code = typeof body.error === 'string' ? body.error : `http_${status}`;
    const message = typeof body.message === 'string' ? body.message : code;
    const details = Array.isArray(body.details) && body.details.length ? `\n  ${body.details.join('\n  ')}` : '';
    super(`${message} (${code})${details}`);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Send no credentials even when some are configured (device flow start/poll). */
  anonymous?: boolean;
  headers?: Record<string, string>;
  /**
   * Most bytes read of a 2xx answer (left out: `JSON_ANSWER_MAX_BYTES`); answers listing a whole dataset pass
   * `LISTING_ANSWER_MAX_BYTES`. An error answer is read up to `ERROR_ANSWER_MAX_BYTES` whatever this says.
   */
  maxBytes?: number;
}

export class ApiClient {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  /** Where the key came from (`NDS_API_KEY` or the credentials file), named when the server refuses it. */
  readonly keySource: string | undefined;
  /** Where the URL came from: NDS_API_URL, the credentials file or the default (`nds auth status` says it). */
  readonly urlSource: UrlSource;
  /** `nds` or `npx nds`: how the hints of this client spell the command. */
  readonly command: string;

  constructor(baseUrl: string, apiKey: string | undefined, keySource?: string, urlSource: UrlSource = 'given', command = 'nds') {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.keySource = keySource;
    this.urlSource = urlSource;
    this.command = command;
  }

  /** A client from the environment and the credentials file (the environment wins). */
  static async fromEnvironment(config: ClientConfig = loadClientConfig()): Promise<ApiClient> {
    const identity = await resolveServerIdentity({ envUrl: config.apiUrl, envKey: config.apiKey, credentialsFile: config.credentialsFile });
    const keySource = identity.keySource === 'credentials' ? config.credentialsFile : identity.keySource;
    return new ApiClient(identity.baseUrl, identity.apiKey, keySource, identity.urlSource, ndsCommand(config.searchPath));
  }

  /** Throws a `CliError` telling how to sign in when no key is configured. */
  requireKey(): string {
    if (!this.apiKey) throw new CliError(`not signed in to ${this.baseUrl}: run \`${this.command} auth login\` or set NDS_API_KEY`);
    return this.apiKey;
  }

  async raw(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (!options.anonymous && this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    try {
      return await fetch(`${this.baseUrl}${path}`, { method: options.method ?? 'GET', headers, body });
    } catch (err) {
      throw new CliError(`cannot reach ${this.baseUrl}: ${(err as Error).cause ? String((err as { cause: Error }).cause.message) : (err as Error).message}`);
    }
  }

  /**
   * The body of `res` as text, at most `maxBytes` of it (left out: `JSON_ANSWER_MAX_BYTES` for a 2xx answer,
   * `ERROR_ANSWER_MAX_BYTES` for another). A longer answer is not read further: a `CliError` names the bound.
   */
  async text(res: Response, maxBytes = res.ok ? JSON_ANSWER_MAX_BYTES : ERROR_ANSWER_MAX_BYTES): Promise<string> {
    try {
      return await readBoundedText(res, maxBytes);
    } catch (err) {
      if (err instanceof AnswerTooLargeError) throw new CliError(`${this.baseUrl}: ${err.message} (is this an nds server?)`);
      throw err;
    }
  }

  /** A JSON request; a non-2xx answer throws `ApiError`. */
  async request<T = Record<string, unknown>>(path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.raw(path, options);
    const text = await this.text(res, res.ok ? options.maxBytes : ERROR_ANSWER_MAX_BYTES);
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = { error: `http_${res.status}`, message: text.slice(0, 200) };
    }
    if (!res.ok) {
      const error = new ApiError(res.status, (parsed ?? {}) as Record<string, unknown>);
      if (res.status === 401 && this.apiKey && !options.anonymous) {
        const source = this.keySource === 'NDS_API_KEY' ? 'the NDS_API_KEY environment variable' : this.keySource ? `the credentials file ${this.keySource}` : 'your configuration';
        error.message = `${this.baseUrl} refused the API key from ${source} (${error.code}: it is wrong, revoked or expired). Run \`${this.command} auth login\` to sign in again${this.keySource === 'NDS_API_KEY' ? ', and unset NDS_API_KEY (it takes precedence over the credentials file)' : ''}.`;
      }
      throw error;
    }
    return parsed as T;
  }
}
