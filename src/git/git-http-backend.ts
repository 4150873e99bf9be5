/**
 * Runs `git http-backend` (git's own smart-HTTP server, as CGI) for one request and turns its CGI answer
 * into a web Response. The request body streams into git, and git's output streams back out.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import { spawnGit, type ProcessLimits } from './spawn-git.js';

export interface BackendRequest {
  method: string;
  /** Path below the project root, e.g. `/nd000001.git/info/refs`. */
  pathInfo: string;
  query: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  body: ReadableStream<Uint8Array> | null;
  projectRoot: string;
  /** Set for an authenticated push (git refuses receive-pack without a user). */
  remoteUser: string | undefined;
  remoteAddr: string;
  /** Called once git has exited, with its exit code: whether or not its answer was read (a client may go away). */
  onExit?: (code: number | null) => void;
  /** Settings of this run (as `git -c`), which git's own children (receive-pack, index-pack) read too. */
  config?: Readonly<Record<string, string>>;
  /** The folder of the server's own hooks git runs (a push's checks); none when left out. */
  hooksDir?: string;
  /** Limits of git and of each process it starts (receive-pack, index-pack); none when left out. */
  limits?: ProcessLimits;
  /**
   * How long, in ms, no byte may move either way (the request's body into git, git's answer out to a reader)
   * before git is ended; no bound when left out. A client that stops reading otherwise holds git, blocked
   * writing its answer, for as long as it keeps the connection open.
   */
  stallMs?: number;
  /** How long, in ms, the request may take in all before git is ended; no bound when left out. */
  maxMs?: number;
  /**
   * Called once git was ended for a stalled or overlong transfer: the caller drops the client's connection,
   * whose answer can no longer end well (a writer waiting for a client that reads nothing never learns that
   * the answer failed).
   */
  onAbandoned?: (why: 'stalled' | 'overlong') => void;
}

/**
 * Splits CGI output into its header block and the rest of the stream. One iterator serves both parts:
 * leaving a `for await` loop early would destroy the stream before the body is read.
 */
async function readCgiHeaders(stdout: Readable, taken: () => void): Promise<{ headers: Headers; status: number; rest: Readable }> {
  const chunks = stdout[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buffered = Buffer.alloc(0);
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
    buffered = Buffer.concat([buffered, next.value]);
    const end = buffered.indexOf('\r\n\r\n');
    const endLf = end === -1 ? buffered.indexOf('\n\n') : -1;
    if (end === -1 && endLf === -1) {
      if (buffered.length > 64 * 1024) throw new Error('git http-backend sent an oversized header block');
      continue;
    }
    const headerEnd = end !== -1 ? end : endLf;
    const sepLength = end !== -1 ? 4 : 2;
    const headers = new Headers();
    let status = 200;
    for (const line of buffered.subarray(0, headerEnd).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
      else headers.append(name, value);
    }
    const remainder = buffered.subarray(headerEnd + sepLength);
    const rest = Readable.from(
      (async function* () {
        try {
          if (remainder.length) {
            yield remainder;
            taken();
          }
          for (let more = await chunks.next(); !more.done; more = await chunks.next()) {
            yield more.value;
            // Resumed: the reader took the chunk.
            taken();
          }
        } finally {
          // An answer nobody reads to its end (the client went away) closes git's output: git, blocked writing
          // it, gets EPIPE and exits, instead of waiting for a reader forever.
          await chunks.return?.();
        }
      })(),
    );
    return { headers, status, rest };
  }
  throw new Error('git http-backend ended without an answer');
}

/** How long git may take to fail a push whose input ended early before it is killed. */
const ABANDONED_INPUT_GRACE_MS = 30_000;
/** How long git, asked to end, may take to end its own children (upload-pack, pack-objects) before it is killed. */
const END_GRACE_MS = 5_000;

/**
 * Ends a transfer that stalls (no byte moved for `stallMs`) or takes longer than `maxMs` in all: `moved` is
 * called on every byte that moves, `end` once when a bound is passed. `stop` clears the watch.
 */
function watchTransfer(stallMs: number | undefined, maxMs: number | undefined, end: (why: 'stalled' | 'overlong') => void): { moved(): void; stop(): void } {
  if (stallMs === undefined && maxMs === undefined) return { moved() {}, stop() {} };
  const started = Date.now();
  let last = started;
  const tick = Math.max(50, Math.min(1000, (stallMs ?? maxMs!) / 4));
  const timer = setInterval(() => {
    const now = Date.now();
    const why = maxMs !== undefined && now - started >= maxMs ? 'overlong' : stallMs !== undefined && now - last >= stallMs ? 'stalled' : undefined;
    if (why === undefined) return;
    clearInterval(timer);
    end(why);
  }, tick).unref();
  return {
    moved: () => {
      last = Date.now();
    },
    stop: () => clearInterval(timer),
  };
}

export async function runGitHttpBackend(req: BackendRequest): Promise<Response> {
  const child = spawnGit(['http-backend'], {
    config: req.config,
    hooksDir: req.hooksDir,
    limits: req.limits,
    env: {
      GIT_PROJECT_ROOT: req.projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
      REQUEST_METHOD: req.method,
      PATH_INFO: req.pathInfo,
      QUERY_STRING: req.query,
      CONTENT_TYPE: req.contentType ?? '',
      ...(req.contentEncoding ? { HTTP_CONTENT_ENCODING: req.contentEncoding } : {}),
      REMOTE_ADDR: req.remoteAddr,
      ...(req.remoteUser ? { REMOTE_USER: req.remoteUser } : {}),
    },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // 'exit', not 'close': 'close' waits for git's output to be read to its end, which never comes when the
  // client hung up after its push was taken (git moved `main`, and what follows a push must still run).
  // A program that cannot be started (no `prlimit` on the machine) ends with 'error' and no 'exit'.
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', resolve);
    child.once('error', (err) => {
      stderr += err.message;
      resolve(null);
    });
  });
  const watch = watchTransfer(req.stallMs, req.maxMs, (why) => {
    // git ends its own children (upload-pack, pack-objects) when asked to end; killed, it could not. Its
    // answer then ends where git stopped, once the client reads on, or at once when the caller drops it.
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), END_GRACE_MS).unref();
    req.onAbandoned?.(why);
  });
  void exited.then((code) => {
    watch.stop();
    req.onExit?.(code);
  });
  // git stops reading a body it cannot parse and exits: writes after that fail (EPIPE), and its answer tells why.
  child.stdin.on('error', () => {});
  const bodyTaken = new Promise<void>((resolve) => {
    if (!req.body) {
      child.stdin.end();
      return resolve();
    }
    // `pipeline`, not `pipe`: a client that goes away mid-body ("aborted"), or git exiting before it has read
    // all of a malformed body (EPIPE on its stdin), must end this request, not throw where nothing listens.
    // A body cut short ends git's input rather than git: git then fails the push itself and removes what it
    // had received (a killed receive-pack leaves its quarantine folder, every byte of it, behind for good).
    const counted = new Transform({
      transform(chunk, _encoding, done) {
        watch.moved();
        done(null, chunk);
      },
    });
    pipeline(Readable.fromWeb(req.body as import('node:stream/web').ReadableStream), counted, child.stdin, (err) => {
      if (err && (err as NodeJS.ErrnoException).code !== 'EPIPE') {
        child.stdin.destroy();
        setTimeout(() => child.kill(), ABANDONED_INPUT_GRACE_MS).unref();
      }
      resolve();
    });
  });
  try {
    const { headers, status, rest } = await readCgiHeaders(child.stdout, watch.moved);
    // git writes its CGI header before it reads the body; the answer's header goes out only once git has had
    // the whole body (or has exited without it). A proxy may stop sending a body once it has passed the
    // answer's header on to its client: nginx does, and then git waits for the rest of a large push forever,
    // and the node forwarding to this one with it. git writes nothing more before it has read its input.
    await Promise.race([bodyTaken, exited]);
    return new Response(Readable.toWeb(rest) as ReadableStream, { status, headers });
  } catch (err) {
    child.kill();
    await exited;
    throw new Error(`git http-backend failed: ${stderr.trim() || (err as Error).message}`, { cause: err });
  }
}
