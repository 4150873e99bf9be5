#!/usr/bin/env bash
# Builds and installs pgvector for PostgreSQL <major> from Debian's own source package. Debian 12 (bookworm)
# has no postgresql-15-pgvector; trixie's source package builds against bookworm's server headers in about
# ten seconds. The trixie source list lives in a scratch folder: the machine's apt sources are not touched.
# Usage: build-pgvector.sh <postgresql major>
set -euo pipefail
major="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/lists/partial"
echo "deb-src http://deb.debian.org/debian trixie main" > "$work/sources.list"
apt_scratch=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists")
apt-get "${apt_scratch[@]}" update -qq
(cd "$work" && apt-get "${apt_scratch[@]}" --download-only source pgvector >/dev/null 2>&1)

apt-get install -y -qq --no-install-recommends "postgresql-server-dev-$major" gcc make >/dev/null
tar -xzf "$work"/pgvector_*.orig.tar.gz -C "$work"
src="$(find "$work" -maxdepth 1 -type d -name 'pgvector-*' | head -n1)"
# OPTFLAGS="" leaves out -march=native, so the library runs on any x86-64 machine.
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" OPTFLAGS="" >/dev/null
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" install >/dev/null
echo "setup: pgvector built from Debian's source package for PostgreSQL $major"
