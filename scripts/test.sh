#!/usr/bin/env bash
# The test command of the README: every test on embedded PGlite; then, when TEST_DATABASE_URL names a
# PostgreSQL server, the database-backed tests again on that server.
#
# The test files run packed into a few groups (test/support/test-groups.mjs), each group one process that
# runs its files one after the other: the sources and PGlite load once per group, not once per file. Groups
# are balanced by the durations in test/support/test-durations.json (test-durations-postgres.json for the
# PostgreSQL pass) and start longest first.
# NDS_TEST_GROUPS (default 9; 0 = one process per file, as plain `node --test`) and NDS_TEST_CONCURRENCY
# (default 3: processes at a time) tune it. Three on two cores: a pass keeps only 0.9-1.1 cores busy with two
# (its tests wait on servers, git, browsers and child processes); with little else running, the PGlite pass took
# 588 s with three against 800 s with two. Test files given as arguments run instead of all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob

groups=${NDS_TEST_GROUPS:-9}
concurrency=${NDS_TEST_CONCURRENCY:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/nds-test-groups.XXXXXX")
trap 'rm -rf "$work"' EXIT

all=("$@")
[ ${#all[@]} -gt 0 ] || all=(test/**/*.test.ts)
started=$SECONDS

# Runs one pass, its output also kept in a log; when it fails, the failing tests' lines and errors are printed
# again at the end, where a reader of only the output's tail (a CI summary) sees them.
run_pass() {
  local name=$1 log="$work/$1.log" status=0
  shift
  "$@" 2>&1 | tee "$log" || status=$?
  if [ "$status" != 0 ]; then
    echo "== the $name pass failed (exit $status); its failures and errors again:"
    grep -n -E '✖|not ok|[Ee]rror:|Uncaught|unhandled|exitCode|timed out|cancelled' "$log" | grep -v 'ℹ cancelled 0' | head -n 120
  fi
  return "$status"
}
# `nds/client` resolves to its build (package.json exports): build it from the sources being tested.
node scripts/build-client.mjs
mapfile -t runs < <(node test/support/test-groups.mjs "$groups" "$work/pglite" "${all[@]}")
# NDS_TEST_PGLITE=0 leaves this pass out (CI runs it on another Node.js than the PostgreSQL pass).
if [ "${NDS_TEST_PGLITE:-1}" != 0 ]; then
  run_pass PGlite node --import tsx --test --test-concurrency="$concurrency" "${runs[@]}"
  echo "== embedded PGlite pass: ${#all[@]} files in $((SECONDS - started)) s"
fi

# Files that start a server use the database, as do those that ask which one (usingPostgres); the pure ones
# need no second pass (and files given as arguments may hold none that do), nor do the files that say
# `// test.sh: embedded pass only` (browser pages, docs walk-throughs and the CLI's and clients' end-to-end
# files, whose database work the HTTP tests cover on PostgreSQL: each of them costs a browser, or a process
# per command, again for nothing new).
mapfile -t dbfiles < <(grep -l 'startTestServer\|usingPostgres' "${all[@]}" | xargs -r grep -L '^// test.sh: embedded pass only' || true)
if [ -n "${TEST_DATABASE_URL:-}" ] && [ ${#dbfiles[@]} -gt 0 ]; then
  echo "== again on the PostgreSQL server (${#dbfiles[@]} files)"
  mapfile -t runs < <(NDS_TEST_DB=postgres node test/support/test-groups.mjs "$groups" "$work/postgres" "${dbfiles[@]}")
  started=$SECONDS
  NDS_TEST_DB=postgres run_pass PostgreSQL node --import tsx --test --test-concurrency="$concurrency" "${runs[@]}"
  echo "== PostgreSQL pass: ${#dbfiles[@]} files in $((SECONDS - started)) s"
fi
