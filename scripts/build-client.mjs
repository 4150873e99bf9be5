// Builds the client module that `nds/client` exports (src/client/, TypeScript) into plain JavaScript,
// dist/client/index.js, so that Node.js imports it without a TypeScript loader (Node does not strip types
// under node_modules). npm runs this on install (`prepare`); the test command runs it before the tests.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [path.join(root, 'src', 'client', 'index.ts')],
  outfile: path.join(root, 'dist', 'client', 'index.js'),
  bundle: true,
  format: 'esm',
  // Global fetch only: the same file runs in Node.js ≥ 20, Deno, Bun and browsers.
  platform: 'neutral',
  // Only Node.js-like runtimes read the credentials file (src/client/server-identity.ts, loaded when needed).
  external: ['node:*'],
  target: 'es2022',
  sourcemap: 'linked',
  logLevel: 'warning',
});
