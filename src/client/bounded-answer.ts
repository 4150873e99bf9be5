/**
 * Reading a server's answer whole, up to a bound: a broken or hostile server answering hundreds of MiB (or
 * without end) must not be taken into memory. Past the bound reading stops and the connection is closed.
 * `nds/client` and the `nds` command share it, and each turns `AnswerTooLargeError` into its own error.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

/** Most bytes read of an error answer: a refusal's JSON is a few hundred bytes. */
export const ERROR_ANSWER_MAX_BYTES = 64 * KiB;

/** Most bytes read of one JSON answer: an object or a page (1,000 recordings of 300 channels are about 20 MB). */
export const JSON_ANSWER_MAX_BYTES = 64 * MiB;

/**
 * Most bytes read of an answer that lists a whole dataset or window list: a manifest (a million files are
 * about 170 MB), a dataset's recordings or events, `POST /windows` (up to a million windows). The server
 * builds each as one string, and V8 holds no string longer than 2^29 − 24 characters: no real answer is larger.
 */
export const LISTING_ANSWER_MAX_BYTES = 512 * MiB;

/** The most values of a signal window (the server's `MAX_WINDOW_VALUES`), as float32 bytes. */
export const WINDOW_ANSWER_MAX_BYTES = 16 * MiB * 4;

/** `64 KiB`, `512 MiB`: a bound as people read it. */
export function formatBound(bytes: number): string {
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes >= KiB && bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;
}

/**
 * An answer passed the bound its reader set; reading stopped and the connection was closed. Nothing to retry:
 * a real server's answers stay far below it, so the URL names something else than an nds server, or a broken one.
 */
export class AnswerTooLargeError extends Error {
  constructor(
    /** The path of the URL that answered. */
    readonly path: string,
    /** The answer's HTTP status. */
    readonly status: number,
    readonly maxBytes: number,
  ) {
    super(`the answer to ${path} (HTTP ${status}) is larger than ${formatBound(maxBytes)}, which no real answer reaches: reading stopped there`);
    this.name = 'AnswerTooLargeError';
  }
}

function pathOf(res: Response, fallback: string): string {
  try {
    return res.url ? new URL(res.url).pathname : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The body of `res`, at most `maxBytes` of it, as `Response.arrayBuffer()` gives it. A longer body, or a
 * `Content-Length` announcing one, throws `AnswerTooLargeError` as soon as it is seen, after cancelling the body
 * (which closes the connection). The error names the path of `res.url`, or `path` where `res` has no URL (a
 * `Response` made by a `fetch` stand-in).
 */
export async function readBoundedAnswer(res: Response, maxBytes: number, path = '(unknown path)'): Promise<ArrayBuffer> {
  const tooLarge = () => new AnswerTooLargeError(pathOf(res, path), res.status, maxBytes);
  if (!res.body) return new ArrayBuffer(0);
  const announced = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(announced) && announced > maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const buffer = new ArrayBuffer(total);
  const out = new Uint8Array(buffer);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return buffer;
}

/** `readBoundedAnswer` decoded as UTF-8 text (a leading byte-order mark dropped, as `Response.text()` does). */
export async function readBoundedText(res: Response, maxBytes: number, path?: string): Promise<string> {
  return new TextDecoder().decode(await readBoundedAnswer(res, maxBytes, path));
}
