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

export function barProgress(label: string): Progress {
  const tty = !!process.stderr.isTTY;
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% {done}/{all} MB{rate}`,
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
  const payload = () => ({ done: mb(done), all: mb(total), rate: rateText(moved, firstMovedAt, Date.now()) });
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
