#!/usr/bin/env bash
# `npm run bench`: every benchmark, each printing its figures beside a baseline measured in the same run.
# `npm run bench -- conversion gateway` runs only the named ones.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A benches=(
  [first-run]="node --import tsx bench/first-run.ts"  # spawns nds serve --demo: only when named (npm run bench -- first-run)
  [conversion]="node --import tsx bench/conversion.ts"
  [conversion-workers]="node --import tsx bench/conversion-workers.ts"  # needs PostgreSQL (BENCH_DATABASE_URL): only when named
  [viewer]="node --import tsx bench/viewer.ts"
  [annotation-density]="node --import tsx bench/annotation-density.ts"  # the viewer's annotation step in Node: only when named
  [auth]="node --import tsx bench/auth.ts"
  [gateway]="node --import tsx bench/gateway.ts"
  [upload]="node --import tsx bench/upload.ts"
  [upload-s3]="bash bench/upload-s3.sh"  # against lib-storage into the radosgw of scripts/ci/services/radosgw.sh: only when named
  [soak]="node --import tsx bench/soak.ts"  # 5 minutes: only when named (npm run bench -- soak)
  [ml]="node --import tsx bench/ml.ts"
  [mcp]="node --import tsx bench/mcp.ts"
  [scale]="node --import tsx bench/scale.ts"  # fills a PostgreSQL database of 1,000,000 recordings (minutes): only when named
  [zstd-zlib]="node --import tsx bench/zstd-zlib.ts"  # node:zlib zstd against zstd-napi: run it on Node 22.15+ or 24
  [copy-sweep]="node --import tsx bench/copy-sweep.ts"  # needs the radosgw of scripts/ci/services/radosgw.sh: only when named
  [quota]="node --import tsx bench/quota.ts"  # the storage quota's reservation beside a bare route; PostgreSQL with BENCH_DATABASE_URL
  [cluster]="node --import tsx bench/cluster.ts"  # serve alone vs nginx with 1 and 2 API nodes; needs PostgreSQL and nginx: only when named
)
order=(conversion viewer auth gateway upload ml mcp)

selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${order[@]}")
for name in "${selected[@]}"; do
  [ -n "${benches[$name]:-}" ] || { echo "unknown bench: $name (have: ${order[*]})" >&2; exit 2; }
  echo "== $name"
  ${benches[$name]}
done
