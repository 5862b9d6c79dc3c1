#!/usr/bin/env bash
# Builds and installs the pgvector extension into the local PostgreSQL server, so the store's
# pgvector path (store/pgstore) is tested. Debian bookworm has no postgresql-NN-pgvector package,
# so this takes pgvector's source from the Go module proxy (which serves any GitHub repository
# as a zip), the server headers from apt (postgresql-server-dev-NN at exactly the installed
# server's version, so the running server is neither upgraded nor restarted), and runs make.
#
# Idempotent and quiet: it does nothing when the extension is already installed. It fails with
# the reason when a step cannot be done. Needs root (apt and the server's lib directory), go,
# make and a C compiler.
#
#   bash .ci/pgvector.sh            # PGVECTOR_VERSION=v0.8.0 by default
set -euo pipefail

version="${PGVECTOR_VERSION:-v0.8.0}"

fail() { echo "pgvector: $*" >&2; exit 1; }

major="${PG_MAJOR:-$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)}"
[ -n "$major" ] || fail "no PostgreSQL cluster under /etc/postgresql: install postgresql first (or set PG_MAJOR)"
pg_config="/usr/lib/postgresql/$major/bin/pg_config"
libdir="/usr/lib/postgresql/$major/lib"
sharedir="/usr/share/postgresql/$major"

if [ -f "$libdir/vector.so" ] && [ -f "$sharedir/extension/vector.control" ]; then
  exit 0
fi

if [ ! -x "$pg_config" ]; then
  server="postgresql-$major"
  have=$(dpkg-query -W -f='${Version}' "$server" 2>/dev/null) || fail "package $server is not installed, so the headers' version cannot be matched to it"
  pkg="postgresql-server-dev-$major=$have"
  # The headers must come at the running server's version: a newer one would pull in (and
  # restart) a newer server. apt-get -s shows what would be installed without doing it.
  plan=$(apt-get install -s -y --no-install-recommends "$pkg" 2>&1) || {
    apt-get update -qq >/dev/null 2>&1 || true
    plan=$(apt-get install -s -y --no-install-recommends "$pkg" 2>&1) || fail "apt cannot install $pkg: $(echo "$plan" | tail -3)"
  }
  if echo "$plan" | grep -Eq "^Inst ($server|postgresql-common|libpq5)[: ]"; then
    fail "installing $pkg would upgrade the server packages: $(echo "$plan" | grep -E '^Inst (postgresql|libpq)' | tr '\n' ' ')"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/tmp/pgvector-apt.log 2>&1 ||
    fail "apt-get install $pkg failed: $(tail -5 /tmp/pgvector-apt.log)"
fi
[ -x "$pg_config" ] || fail "$pg_config is missing after installing the headers"
command -v go >/dev/null || fail "go is needed to fetch the source from the module proxy"
command -v make >/dev/null || fail "make is not installed"

# Outside any module, so no go.mod or go.sum is touched.
src=$(cd /tmp && GOFLAGS= go mod download -json "github.com/pgvector/pgvector@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$src" ] && [ -f "$src/Makefile" ] || fail "go mod download github.com/pgvector/pgvector@$version gave no source directory"

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -r "$src/." "$build"
chmod -R u+w "$build"
log="$build/build.log"
# OPTFLAGS="": no -march=native, so the library also runs on a different CPU of the same
# architecture (the image may be built on one machine and run on another).
if ! make -C "$build" PG_CONFIG="$pg_config" OPTFLAGS="" >"$log" 2>&1; then
  tail -20 "$log" >&2
  fail "make failed (above)"
fi
if ! make -C "$build" PG_CONFIG="$pg_config" OPTFLAGS="" install >"$log" 2>&1; then
  tail -20 "$log" >&2
  fail "make install failed (above)"
fi
[ -f "$libdir/vector.so" ] || fail "make install did not put vector.so in $libdir"
echo "pgvector $version installed for PostgreSQL $major (no server restart needed: CREATE EXTENSION vector loads it)"
