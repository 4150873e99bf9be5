/** A byte progress bar on stderr for uploads and downloads; silent for `--json`, periodic lines off a TTY. */
import { SingleBar } from 'cli-progress';

export interface Progress {
  start(totalBytes: number): void;
  advance(bytes: number): void;
  log(message: string): void;
  stop(): void;
}

export const silentProgress: Progress = { start() {}, advance() {}, log() {}, stop() {} };

const mb = (n: number) => (n / 1e6).toFixed(1);

export function barProgress(label: string): Progress {
  const tty = !!process.stderr.isTTY;
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% {done}/{all} MB {rate} MB/s`,
    stream: process.stderr,
    noTTYOutput: !tty,
    notTTYSchedule: 5000,
    hideCursor: tty,
  });
  let done = 0;
  let started = 0;
  let running = false;
  let total = 0;
  const payload = () => ({ done: mb(done), all: mb(total), rate: mb(done / Math.max(0.001, (Date.now() - started) / 1000)) });
  return {
    start(totalBytes) {
      total = totalBytes;
      done = 0;
      started = Date.now();
      running = true;
      bar.start(totalBytes, 0, payload());
    },
    advance(n) {
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
