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

/** Input bytes of one base64 piece: a multiple of 3, so pieces join into one base64 string (512 KiB out). */
const PIECE_BYTES = 3 * 128 * 1024;

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

export class BlobAttachments {
  readonly #blobs = new Map<string, Uint8Array>();

  /** A valid base64 stand-in for `bytes` (36 characters), replaced by their base64 when the answer is sent. */
  attach(bytes: Uint8Array): string {
    const token = `nds0${randomBytes(16).toString('hex')}`;
    this.#blobs.set(token, bytes);
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
    const parts: Array<string | Uint8Array> = [];
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
    // The answer's pieces in order: JSON text (as UTF-8) and blobs (to be sent as base64).
    const encoder = new TextEncoder();
    const pieces = parts.map((p) => (typeof p === 'string' ? { text: encoder.encode(p) } : { blob: p }));
    const length = pieces.reduce((sum, p) => sum + (p.text ? p.text.byteLength : base64Length(p.blob!.byteLength)), 0);
    const headers = new Headers(answer.headers);
    headers.set('content-length', String(length));
    let index = 0;
    let offset = 0;
    // A plain stream, not a byte stream: a byte stream would take over (detach) the buffers it is given, and a
    // small Buffer is a view of Node's shared pool.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        for (; index < pieces.length; index++, offset = 0) {
          const { text, blob } = pieces[index]!;
          if (text) {
            if (offset > 0 || text.byteLength === 0) continue;
            offset = text.byteLength;
            return controller.enqueue(text);
          }
          if (offset === blob!.byteLength) continue;
          const end = Math.min(blob!.byteLength, offset + PIECE_BYTES);
          const b64 = Buffer.from(blob!.buffer, blob!.byteOffset + offset, end - offset).toString('base64');
          offset = end;
          return controller.enqueue(Buffer.from(b64, 'latin1'));
        }
        controller.close();
      },
    });
    return new Response(body, { status: answer.status, headers });
  }
}
