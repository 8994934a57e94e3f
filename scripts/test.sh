#!/usr/bin/env bash
# The whole test run: set-up, unit tests, then the end-to-end suites against a real
# kube-apiserver built from Go modules (cached under ~/.cache after the first build).
# Ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Go builds the kube-apiserver the end-to-end suites run against.
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
if [[ -d e2e/test ]]; then
  command -v go >/dev/null || { echo "scripts/test.sh: the end-to-end suites need Go (1.26) on PATH" >&2; exit 1; }
  TURNPIKE_KUBE_BIN=$(bash e2e/scripts/build-kube.sh)
  export TURNPIKE_KUBE_BIN
  exec node scripts/run-tests.mjs --e2e
fi
exec node scripts/run-tests.mjs
