#!/bin/sh
# Prints a .env for docker-compose.yml with a fresh random password for every variable it requires:
#   deploy/make-env.sh > .env
# The names come from docker-compose.yml itself (every ${NAME:?…}), so the two cannot drift apart.
set -eu
compose="$(dirname "$0")/../docker-compose.yml"
for name in $(grep -o '\${[A-Z0-9_]*:?' "$compose" | sed 's/^\${//; s/:?$//' | sort -u); do
  printf '%s=%s\n' "$name" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
done
