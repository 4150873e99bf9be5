/**
 * A hostile server for the tests of answer bounds: on a path it names, it answers a huge body (JSON that is
 * generated as it is sent, never held whole), and it records how much it sent before the client closed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const MiB = 1024 * 1024;

/** One huge answer: its status, the Content-Length it announces (if any), how long it would be. */
export interface HugeAnswer {
  status: number;
  bytes: number;
  announce?: boolean;
  contentType?: string;
  headers?: Record<string, string>;
}

/** What the server saw of one huge answer it began. */
export interface Sent {
  path: string;
  bytes: number;
  /** Whether the whole body went out before the connection closed. */
  finished: boolean;
}

export interface HostileServer {
  url: string;
  /** Every huge answer begun, by request order; complete once its connection has closed. */
  sent: Sent[];
  /** Resolves once the answer to `path` has closed (the client stopped reading, or all was sent). */
  closed(path: string): Promise<Sent>;
  close(): Promise<void>;
}

/**
 * Starts the server. `huge` maps a path (no query) to a huge answer; `small` maps a path to a JSON value
 * answered with 200; anything else is a 404 of a few bytes.
 */
export async function startHostileServer(huge: Record<string, HugeAnswer>, small: Record<string, unknown> = {}): Promise<HostileServer> {
  const sent: Sent[] = [];
  const waiters = new Map<string, Array<(s: Sent) => void>>();
  const done = new Map<string, Sent>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    req.resume();
    const answer = huge[path];
    if (!answer) {
      const value = small[path];
      res.writeHead(value === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value ?? { error: 'not_found', message: 'no such route' }));
      return;
    }
    const record: Sent = { path, bytes: 0, finished: false };
    sent.push(record);
    res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json', ...answer.headers, ...(answer.announce ? { 'content-length': String(answer.bytes) } : {}) });
    // A JSON array of strings, each piece 64 KiB: valid JSON were it read to the end.
    const piece = Buffer.from(`"${'x'.repeat(64 * 1024 - 3)}",`);
    const head = Buffer.from('{"items":[');
    const tail = Buffer.from('""]}');
    let left = answer.bytes - head.length - tail.length;
    let open = true;
    const send = (chunk: Buffer) => {
      record.bytes += chunk.length;
      return res.write(chunk);
    };
    const more = () => {
      while (open && left > 0) {
        const chunk = left >= piece.length ? piece : Buffer.alloc(left, 0x20);
        left -= chunk.length;
        if (!send(chunk)) return void res.once('drain', more);
      }
      if (open) {
        send(tail);
        res.end(() => (record.finished = true));
      }
    };
    res.on('close', () => {
      open = false;
      done.set(path, record);
      for (const w of waiters.get(path)?.splice(0) ?? []) w(record);
    });
    send(head);
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    closed: (path) => {
      const seen = done.get(path);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.set(path, [...(waiters.get(path) ?? []), resolve]));
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
