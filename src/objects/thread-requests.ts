/**
 * Requests answered by one worker thread, matched to their answers by a sequence number: the hashing thread of
 * uploads in parts (range-hasher.ts) and the threads that write a conversion's chunks (direct-object-writer.ts).
 * The thread runs CommonJS source evaluated in it (no file to resolve, under tsx or a bundle alike), starts
 * with the first request, and keeps the process alive only while a request waits on it. A thread that fails or
 * exits fails the requests waiting on it, and the next request starts another.
 */
import { Worker } from 'node:worker_threads';

/** What a thread answers: `seq` the request's, `error` (and `code`) when it failed. */
export interface ThreadAnswer {
  seq: number;
  error?: string;
  code?: string;
}

interface Started<Answer> {
  thread: Worker;
  waiting: Map<number, { resolve(answer: Answer): void; reject(err: Error): void }>;
}

export class ThreadRequests<Answer extends ThreadAnswer> {
  readonly #source: string;
  readonly #workerData: () => unknown;
  readonly #name: string;
  #started: Started<Answer> | undefined;
  #seq = 0;

  /** `source`: the thread's code, which answers each message with its `seq`; `workerData`: asked at each start. */
  constructor(source: string, name: string, workerData: () => unknown = () => undefined) {
    this.#source = source;
    this.#name = name;
    this.#workerData = workerData;
  }

  /** Whether a thread is running (a request has started it and it has not failed or been closed). */
  get running(): boolean {
    return this.#started !== undefined;
  }

  /** Sends `message` with a new `seq`; the answer, or an error carrying the thread's `code` when it failed. */
  ask(message: Record<string, unknown>): Promise<Answer> {
    const started = this.#start();
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      // Held while a caller waits on it, so that the process does not end under the caller.
      if (started.waiting.size === 0) started.thread.ref();
      started.waiting.set(seq, { resolve, reject });
      started.thread.postMessage({ ...message, seq });
    });
  }

  async close(): Promise<void> {
    const started = this.#started;
    this.#started = undefined;
    await started?.thread.terminate();
  }

  #start(): Started<Answer> {
    if (this.#started) return this.#started;
    const thread = new Worker(this.#source, { eval: true, workerData: this.#workerData() });
    const started: Started<Answer> = { thread, waiting: new Map() };
    thread.unref();
    thread.on('message', (answer: Answer) => {
      const waiting = started.waiting.get(answer.seq);
      started.waiting.delete(answer.seq);
      if (started.waiting.size === 0) thread.unref();
      if (!waiting) return;
      if (answer.error !== undefined) waiting.reject(Object.assign(new Error(answer.error), { code: answer.code }));
      else waiting.resolve(answer);
    });
    const fail = (err: Error) => {
      if (this.#started === started) this.#started = undefined;
      for (const w of started.waiting.values()) w.reject(err);
      started.waiting.clear();
    };
    thread.on('error', fail);
    thread.on('exit', (code) => fail(new Error(`the ${this.#name} thread exited (${code})`)));
    this.#started = started;
    return started;
  }
}
