#!/usr/bin/env bash
# Builds the upstream conformance test binary (e2e/conformance: sigs.k8s.io/gateway-api/conformance
# v1.7.0, which needs Go >= 1.27, fetched through the module proxy) under ~/.cache, keyed by its
# sources exactly as e2e/harness/conformance.ts keys it, and prints its path. scripts/test.sh runs it
# before the suites start, so that a cold build (minutes on a new machine) does not run inside the
# conformance suite's clock beside the other suites; the harness builds it itself when run alone.
set -euo pipefail
src=$(cd "$(dirname "$0")/../conformance" && pwd)
key=$({ cat "$src/go.mod"; printf '\0'; cat "$src/go.sum"; printf '\0'; cat "$src/conformance_test.go"; } | sha256sum | cut -c1-16)
out="${XDG_CACHE_HOME:-$HOME/.cache}/turnpike/conformance-${key}.test"
if [[ -x "$out" ]]; then
  echo "$out"; exit 0
fi
mkdir -p "$(dirname "$out")"
echo "building the conformance tests into $out (cold build takes a few minutes)" >&2
(cd "$src" && GOTOOLCHAIN=go1.27.3 GOFLAGS=-mod=mod go test -c -o "$out.tmp.$$" . >&2)
# A rename, so a concurrent build or reader never sees half a binary.
mv -f "$out.tmp.$$" "$out"
echo "$out"
