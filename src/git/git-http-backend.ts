/**
 * Runs `git http-backend` (git's own smart-HTTP server, as CGI) for one request and turns its CGI answer
 * into a web Response. The request body streams into git, and git's output streams back out.
 */
import { pipeline, Readable } from 'node:stream';
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
}

/**
 * Splits CGI output into its header block and the rest of the stream. One iterator serves both parts:
 * leaving a `for await` loop early would destroy the stream before the body is read.
 */
async function readCgiHeaders(stdout: Readable): Promise<{ headers: Headers; status: number; rest: Readable }> {
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
          if (remainder.length) yield remainder;
          for (let more = await chunks.next(); !more.done; more = await chunks.next()) yield more.value;
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
  void exited.then((code) => req.onExit?.(code));
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
    pipeline(Readable.fromWeb(req.body as import('node:stream/web').ReadableStream), child.stdin, (err) => {
      if (err && (err as NodeJS.ErrnoException).code !== 'EPIPE') {
        child.stdin.destroy();
        setTimeout(() => child.kill(), ABANDONED_INPUT_GRACE_MS).unref();
      }
      resolve();
    });
  });
  try {
    const { headers, status, rest } = await readCgiHeaders(child.stdout);
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
