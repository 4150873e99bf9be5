/**
 * A `redis-server` of a test's own on a free port (never the shared one), which the test kills, hangs
 * (`SIGSTOP`) and restarts; it persists every write, so a restart brings back what was there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

/** A `redis-server` of this test's own, persisting every write (so a restart brings back what was there). */
export class OwnRedis {
  #child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`redis-server exited: ${out}`)));
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.#child!.kill(signal);
  }

  async kill(): Promise<void> {
    const child = this.#child!;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async with<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    const r = new Redis(this.url);
    try {
      return await fn(r);
    } finally {
      r.disconnect();
    }
  }
}

