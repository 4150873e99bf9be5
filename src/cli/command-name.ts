/**
 * How a hint spells the `nds` command so that the reader can run it: `nds` when this very program is a
 * command on the person's PATH (a global install, `npm link`), otherwise `npx nds`, which runs it from the
 * folder where nds is installed. npm's own `node_modules/.bin` folders do not count: `npm start` puts one on
 * the server's PATH, but not on the PATH of the terminal where the reader types the hint.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

function real(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** `nds` or `npx nds`, for a program started as `entry` (process.argv[1]) under a PATH of `searchPath`. */
export function ndsCommand(searchPath: readonly string[], entry: string | undefined = process.argv[1]): string {
  const self = entry ? real(entry) : undefined;
  if (!self) return 'npx nds';
  for (const dir of searchPath) {
    if (dir.split(path.sep).includes('node_modules')) continue;
    if (real(path.join(dir, 'nds')) === self) return 'nds';
  }
  return 'npx nds';
}

