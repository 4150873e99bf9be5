/**
 * A byte progress bar on stderr for uploads and downloads; silent for `--json`, periodic lines off a TTY.
 * Bytes moved over the network (`advance`) and bytes accounted for without moving them (`skip`: content the
 * service already holds, files already downloaded, hashes read from the cache) both fill the bar; only the
 * first make the rate, which is shown once a byte has been sent and measured from that byte on.
 */
import { SingleBar } from 'cli-progress';

export interface Progress {
  start(totalBytes: number): void;
  /** Bytes sent or received (negative to take back bytes of a failed attempt). */
  advance(bytes: number): void;
  /** Bytes done without a transfer: they fill the bar, not the rate. */
  skip(bytes: number): void;
  log(message: string): void;
  stop(): void;
}

export const silentProgress: Progress = { start() {}, advance() {}, skip() {}, log() {}, stop() {} };

const mb = (n: number) => (n / 1e6).toFixed(1);

/** `, 12.3 MB/s` over the bytes moved since the first one; empty while none has moved. */
export function rateText(movedBytes: number, firstMovedAt: number | undefined, now: number): string {
  if (movedBytes <= 0 || firstMovedAt === undefined) return '';
  return `, ${mb(movedBytes / Math.max(0.001, (now - firstMovedAt) / 1000))} MB/s`;
}

/**
 * Seconds left at the rate bytes have moved so far: the bytes still to do over the rate since the first byte
 * moved. Undefined until a byte has moved (skipped bytes say nothing of the network's speed).
 */
export function etaSeconds(doneBytes: number, totalBytes: number, movedBytes: number, firstMovedAt: number | undefined, now: number): number | undefined {
  if (movedBytes <= 0 || firstMovedAt === undefined) return undefined;
  const rate = movedBytes / Math.max(0.001, (now - firstMovedAt) / 1000);
  return Math.max(0, totalBytes - doneBytes) / rate;
}

function etaText(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '';
  const s = Math.ceil(seconds);
  const text = s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  return `, ETA ${text}`;
}

/**
 * `--json`: progress as lines of JSON on `out` (stderr; stdout keeps the summary), at most two a second and
 * one at the end: `{"event":"progress","done_bytes":..,"total_bytes":..,"sent_bytes":..,"skipped_bytes":..,
 * "rate_bytes_per_s":..,"eta_s":..}`; messages (retries) as `{"event":"message","message":..}`.
 */
export function jsonProgress(out: NodeJS.WritableStream, intervalMs = 500): Progress {
  let total = 0;
  let done = 0;
  let moved = 0;
  let skipped = 0;
  let firstMovedAt: number | undefined;
  let lastAt = 0;
  let running = false;
  const emit = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastAt < intervalMs) return;
    lastAt = now;
    const rate = moved > 0 && firstMovedAt !== undefined ? moved / Math.max(0.001, (now - firstMovedAt) / 1000) : null;
    const eta = etaSeconds(done, total, moved, firstMovedAt, now);
    out.write(`${JSON.stringify({ event: 'progress', done_bytes: done, total_bytes: total, sent_bytes: moved, skipped_bytes: skipped, rate_bytes_per_s: rate === null ? null : Math.round(rate), eta_s: eta === undefined ? null : Math.round(eta) })}\n`);
  };
  return {
    start(totalBytes) {
      total = totalBytes;
      done = moved = skipped = 0;
      firstMovedAt = undefined;
      running = true;
      emit(true);
    },
    advance(n) {
      if (n > 0) firstMovedAt ??= Date.now();
      done += n;
      moved += n;
      emit(false);
    },
    skip(n) {
      done += n;
      skipped += n;
      emit(false);
    },
    log(message) {
      out.write(`${JSON.stringify({ event: 'message', message })}\n`);
    },
    stop() {
      if (!running) return;
      running = false;
      emit(true);
    },
  };
}

export function barProgress(label: string): Progress {
  const tty = !!process.stderr.isTTY;
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% {done}/{all} MB{rate}{left}`,
    stream: process.stderr,
    noTTYOutput: !tty,
    notTTYSchedule: 5000,
    hideCursor: tty,
  });
  let done = 0;
  let moved = 0;
  let firstMovedAt: number | undefined;
  let running = false;
  let total = 0;
  const payload = () => {
    const now = Date.now();
    // No ETA once all is done: the last line of a finished upload says what it took, not what is left.
    return { done: mb(done), all: mb(total), rate: rateText(moved, firstMovedAt, now), left: done < total ? etaText(etaSeconds(done, total, moved, firstMovedAt, now)) : '' };
  };
  return {
    start(totalBytes) {
      total = totalBytes;
      done = 0;
      moved = 0;
      firstMovedAt = undefined;
      running = true;
      bar.start(totalBytes, 0, payload());
    },
    advance(n) {
      if (n > 0) firstMovedAt ??= Date.now();
      done += n;
      moved += n;
      bar.update(done, payload());
    },
    skip(n) {
      done += n;
      bar.update(done, payload());
    },
    log(message) {
      process.stderr.write(tty ? `\n${message}\n` : `${message}\n`);
    },
    // Must run on every path: the bar's timer would otherwise keep the process alive after an error.
    stop() {
      if (!running) return;
      running = false;
      bar.update(done, payload());
      bar.stop();
    },
  };
}
