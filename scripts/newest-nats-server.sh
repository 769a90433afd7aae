#!/usr/bin/env bash
# Fetches the newest nats-server Debian packages (unstable's .deb, from Debian's archive) into
# .cache/nats-server-<version>/ unless it is there already, and prints the binary's path. CI runs the
# bus tests on it beside the pinned 2.9.10 (docs/deploy.md, "Supported nats-server versions");
# NATS_SERVER_BIN=<path> makes any test, drill or `npm start` use it.
set -euo pipefail
cd "$(dirname "$0")/.."
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
index=$(mktemp)
trap 'rm -f "$index"' EXIT
curl -fsS --retry 3 -o "$index" "$mirror/dists/sid/main/binary-amd64/Packages.xz"
file=$(xzcat "$index" | awk '/^Package: nats-server$/ { found = 1 } found && /^Filename:/ { print $2; found = 0 }')
[ -n "$file" ] || { echo "no nats-server in $mirror's sid index" >&2; exit 1; }
version=$(basename "$file" | sed -E 's/^nats-server_([^-_]+).*/\1/')
dir=".cache/nats-server-$version"
if [ ! -x "$dir/usr/sbin/nats-server" ]; then
  mkdir -p "$dir"
  curl -fsS --retry 3 -o "$dir/nats-server.deb" "$mirror/$file"
  dpkg-deb -x "$dir/nats-server.deb" "$dir"
  rm "$dir/nats-server.deb"
fi
echo "$PWD/$dir/usr/sbin/nats-server"
