/** What the viewer benches share: the frames a page draws, and the CPU time of chromium's renderers. */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU ms of the main thread of each chromium renderer process (its thread id is its pid); empty off Linux. */
export function rendererMainCpu(): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime, in clock ticks of 10 ms.
      out.set(Number(pid), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

/**
 * An init script that records each frame the viewer draws into `window.ndsFrames`, through a setter on
 * `window.ndsViewer`: `fields` is the object literal of a frame's record, over the viewer's state `v`. A string,
 * not a function: the TypeScript loader would wrap a function's inner functions in helpers the page lacks.
 */
export function recordFramesScript(fields: string): string {
  return `
    const frames = [];
    let last;
    Object.defineProperty(window, 'ndsFrames', { value: frames });
    Object.defineProperty(window, 'ndsViewer', {
      configurable: true,
      get() { return last; },
      set(v) {
        if (!last || last.renders !== v.renders) frames.push(${fields});
        last = v;
      },
    });
  `;
}
