/** An object store whose writes of chosen keys wait at a gate the test opens: a worker held at an exact point. */
import type { ObjectStore } from '../../src/objects/object-store.js';

export interface Gate {
  /** Resolves when a write the gate holds has arrived. */
  reached: Promise<void>;
  /** Lets the held writes go on; with `failWith`, they fail with it instead. */
  open(failWith?: Error): void;
}

/** `objects` whose `put` of a key `holds` names waits until the gate is opened. */
export function gatedStore(objects: ObjectStore, holds: (key: string) => boolean): { objects: ObjectStore; gate: Gate } {
  let arrive!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  let release!: () => void;
  let failure: Error | undefined;
  const opened = new Promise<void>((r) => (release = r));
  const proxy = new Proxy(objects, {
    get(target, prop) {
      if (prop === 'put') {
        return async (key: string, body: Parameters<ObjectStore['put']>[1], options?: Parameters<ObjectStore['put']>[2]) => {
          if (holds(key)) {
            arrive();
            await opened;
            if (failure) throw failure;
          }
          return target.put(key, body, options);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { objects: proxy, gate: { reached, open: (failWith?: Error) => ((failure = failWith), release()) } };
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
