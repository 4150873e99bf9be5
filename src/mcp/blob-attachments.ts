/**
 * Large binary answers (`read_window`'s `.npy`) written into the JSON-RPC answer after the MCP SDK has built it.
 * A tool gives the SDK a short stand-in for the base64 (`attach`); the SDK checks the answer (an `atob` of every
 * blob) and serialises it (`JSON.stringify`) with the stand-in, which costs nothing; `splice` then sends that
 * JSON with each stand-in's string replaced by its bytes' base64, encoded a piece at a time as the socket takes
 * them. The client reads exactly the JSON it would have read from the SDK alone. For a million channel-samples
 * (5.3 MB of base64) this saves the server an `atob`, a `JSON.stringify` of the string and its UTF-8 copy, each
 * 15–30 ms, and the garbage of all three (bench/RESULTS.md, issue 25).
 *
 * A stand-in is 128 random bits, made per call, so no other text of an answer (names, paths, an error) can
 * hold one; it is replaced only where it is a whole JSON string (between its quotes).
 */
import { randomBytes } from 'node:crypto';

/**
 * Input bytes of one base64 piece: a multiple of 3, so pieces join into one base64 string, and small enough (64 KiB
 * out) that neither the string nor the bytes sent are fresh memory from the kernel (`windowNpyPieces`).
 */
const PIECE_BYTES = 3 * 16 * 1024;

/** Bytes made on demand: `pieces` gives them in order, each piece valid until the next is asked for. */
export interface LazyBytes {
  byteLength: number;
  pieces(): Iterable<Uint8Array>;
}

const lazy = (bytes: Uint8Array | LazyBytes): LazyBytes => (bytes instanceof Uint8Array ? { byteLength: bytes.byteLength, pieces: () => [bytes] } : bytes);

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

export class BlobAttachments {
  readonly #blobs = new Map<string, LazyBytes>();

  /** A valid base64 stand-in for `bytes` (36 characters), replaced by their base64 when the answer is sent. */
  attach(bytes: Uint8Array | LazyBytes): string {
    const token = `nds0${randomBytes(16).toString('hex')}`;
    this.#blobs.set(token, lazy(bytes));
    return token;
  }

  /** Whether any tool attached bytes. */
  get isEmpty(): boolean {
    return this.#blobs.size === 0;
  }

  /**
   * `answer` (the SDK's JSON answer) with each stand-in it holds replaced by its bytes' base64, streamed, with
   * its exact `Content-Length`. Any other answer (an error, an event stream) is returned as it is.
   */
  async splice(answer: Response): Promise<Response> {
    if (this.isEmpty || !(answer.headers.get('content-type') ?? '').startsWith('application/json')) return answer;
    const text = await answer.text();
    const parts: Array<string | LazyBytes> = [];
    let rest = text;
    for (;;) {
      let first: { at: number; token: string } | undefined;
      for (const token of this.#blobs.keys()) {
        const at = rest.indexOf(`"${token}"`);
        if (at >= 0 && (!first || at < first.at)) first = { at, token };
      }
      if (!first) break;
      parts.push(rest.slice(0, first.at + 1), this.#blobs.get(first.token)!);
      rest = rest.slice(first.at + 1 + first.token.length);
    }
    parts.push(rest);
    // The answer's pieces in order: JSON text (as UTF-8) and blobs (sent as base64, a piece at a time).
    const encoder = new TextEncoder();
    const pieces = parts.map((p) => (typeof p === 'string' ? encoder.encode(p) : p));
    const length = pieces.reduce((sum, p) => sum + (p instanceof Uint8Array ? p.byteLength : base64Length(p.byteLength)), 0);
    const headers = new Headers(answer.headers);
    headers.set('content-length', String(length));
    const staging = Buffer.allocUnsafeSlow(PIECE_BYTES);
    let index = 0;
    let blob: { source: Iterator<Uint8Array>; piece: Uint8Array; at: number; sent: number } | undefined;
    /** The next base64 piece of `blob`: staging filled from its pieces (or what is left of them), encoded. */
    const nextBase64 = (b: NonNullable<typeof blob>): Buffer | undefined => {
      let filled = 0;
      while (filled < PIECE_BYTES) {
        if (b.at === b.piece.byteLength) {
          const next = b.source.next();
          if (next.done) break;
          [b.piece, b.at] = [next.value, 0];
          continue;
        }
        const n = Math.min(PIECE_BYTES - filled, b.piece.byteLength - b.at);
        staging.set(b.piece.subarray(b.at, b.at + n), filled);
        [filled, b.at] = [filled + n, b.at + n];
      }
      b.sent += filled;
      return filled === 0 ? undefined : Buffer.from(staging.toString('base64', 0, filled), 'latin1');
    };
    // A plain stream, not a byte stream: a byte stream would take over (detach) the buffers it is given, and a
    // small Buffer is a view of Node's shared pool.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        while (index < pieces.length) {
          const piece = pieces[index]!;
          if (piece instanceof Uint8Array) {
            index++;
            if (piece.byteLength > 0) return controller.enqueue(piece);
            continue;
          }
          blob ??= { source: piece.pieces()[Symbol.iterator](), piece: new Uint8Array(0), at: 0, sent: 0 };
          const out = nextBase64(blob);
          if (out) return controller.enqueue(out);
          // Content-Length was promised from `byteLength`: a producer that made other bytes breaks the answer off.
          if (blob.sent !== piece.byteLength) return controller.error(new Error(`an attachment made ${blob.sent} bytes, not ${piece.byteLength}`));
          [blob, index] = [undefined, index + 1];
        }
        controller.close();
      },
      cancel() {
        blob?.source.return?.();
      },
    });
    return new Response(body, { status: answer.status, headers });
  }
}
