#!/usr/bin/env bash
# The test command of the README: every test on embedded PGlite; then, when TEST_DATABASE_URL names a
# PostgreSQL server, the database-backed tests again on that server.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob

all=(test/**/*.test.ts)
node --import tsx --test --test-concurrency=2 "${all[@]}"

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  # Files that start a server use the database, as do those that ask which one (usingPostgres); the pure
  # ones need no second pass.
  mapfile -t dbfiles < <(grep -l 'startTestServer\|usingPostgres' "${all[@]}")
  echo "== again on the PostgreSQL server (${#dbfiles[@]} files)"
  NDS_TEST_DB=postgres node --import tsx --test --test-concurrency=2 "${dbfiles[@]}"
fi
