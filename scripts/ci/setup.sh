#!/usr/bin/env bash
# Installs and starts everything the test suite needs on a fresh Debian machine with Node.js and npm.
set -euo pipefail
cd "$(dirname "$0")/../.."

npm ci --no-fund --no-audit

# PostgreSQL server on 127.0.0.1:5432 (trust auth, database test).
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  fi
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null

# pgvector for semantic search on the server: Debian's package where the release has one, else built from
# Debian's source package (bookworm's main archive has no postgresql-15-pgvector). Should both fail, the
# migration skips the extension, ranking uses the SQL cosine function, and the tests expect that.
PG_MAJOR="$(ls /etc/postgresql | head -n1)"
if [ ! -e "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ]; then
  apt-get install -y -qq --no-install-recommends "postgresql-$PG_MAJOR-pgvector" >/dev/null 2>&1 \
    || bash scripts/ci/build-pgvector.sh "$PG_MAJOR" \
    || echo "setup: pgvector not available here; semantic search on the server uses the SQL cosine" >&2
fi

# Redis on 127.0.0.1:6379 (shared gateway cache tests).
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi

# Debian's Chromium for browser tests (never a downloaded browser).
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# Debian's git-lfs: the hosted repositories' git-lfs batch API is tested with the real client.
if ! git lfs version >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends git-lfs >/dev/null
fi

# Debian's openssl: the S3 store's plain reader is tested over https with a certificate made for the test.
if ! command -v openssl >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi

# Debian's nginx for the reverse-proxy test, which runs its own nginx (its own configuration, pid file and
# temporary folders, on a free port). The system service is never started: policy-rc.d refuses it while the
# package installs.
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && added_policy=1
  fi
  installed=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends nginx >/dev/null; } || installed=$?
  if [ -n "$added_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
  [ "$installed" = 0 ]
fi

# Python with NumPy, pytest, PyTorch, MNE and SciPy for the Python client's tests and the ML benchmark.
if ! /usr/bin/python3 -c 'import numpy, pytest, torch, mne, scipy' >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-numpy python3-pytest python3-torch python3-mne python3-scipy >/dev/null
fi

# Further services, one script each (S3 gateway...).
for extra in scripts/ci/services/*.sh; do
  [ -e "$extra" ] && bash "$extra"
done
