#!/usr/bin/env bash
# Builds e2e/xds-check (go-control-plane's ValidateAll over ADS) from Go modules, cached under
# ~/.cache keyed by its sources. Prints the binary's path. scripts/test.sh runs it before the suites
# start: built inside a test, its minute or more on a new machine ran into the test's own clock (a
# 60 s CA rotated between reading credentials and using them).
set -euo pipefail
src=$(cd "$(dirname "$0")/../xds-check" && pwd)
key=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
out="${XDG_CACHE_HOME:-$HOME/.cache}/turnpike/xds-check-${key}"
if [[ -x "$out" ]]; then
  echo "$out"; exit 0
fi
mkdir -p "$(dirname "$out")"
echo "building xds-check into $out (cold build takes a minute or two)" >&2
(cd "$src" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -o "$out.tmp.$$" . >&2)
# A rename, so a concurrent build or reader never sees half a binary.
mv -f "$out.tmp.$$" "$out"
echo "$out"
