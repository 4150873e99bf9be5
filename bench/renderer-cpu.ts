/** The CPU time of chromium's renderer processes, read from /proc (Linux), for the viewer benches. */
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
