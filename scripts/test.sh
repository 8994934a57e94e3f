#!/usr/bin/env bash
# The whole test run: set-up, unit tests, then the end-to-end suites against a real
# kube-apiserver built from Go modules (cached under ~/.cache after the first build).
# Ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The plugin tests pull from a real OCI registry: Debian's docker-registry (distribution v2).
if [[ ! -x /usr/bin/docker-registry ]]; then
  command -v apt-get >/dev/null || { echo "scripts/test.sh: the plugin tests need Debian's docker-registry package" >&2; exit 1; }
  sudo_=""; [[ $(id -u) -ne 0 ]] && sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends docker-registry >/dev/null
  # The package enables a system service on :5000; the tests start their own on loopback.
  $sudo_ systemctl disable --now docker-registry >/dev/null 2>&1 || true
fi
# The console tests drive a headless browser: Debian's chromium.
if [[ ! -x /usr/bin/chromium && -z "${TURNPIKE_CHROMIUM:-}" ]]; then
  command -v apt-get >/dev/null || { echo "scripts/test.sh: the console tests need Debian's chromium package (or TURNPIKE_CHROMIUM)" >&2; exit 1; }
  sudo_=""; [[ $(id -u) -ne 0 ]] && sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
# Go builds the kube-apiserver the end-to-end suites run against.
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
if [[ -d e2e/test ]]; then
  command -v go >/dev/null || { echo "scripts/test.sh: the end-to-end suites need Go (1.26) on PATH" >&2; exit 1; }
  TURNPIKE_KUBE_BIN=$(bash e2e/scripts/build-kube.sh)
  export TURNPIKE_KUBE_BIN
  # The chart tests run real Helm, built the same way (cached under ~/.cache too).
  TURNPIKE_HELM=$(bash e2e/scripts/build-helm.sh)
  export TURNPIKE_HELM
  # And the xDS checker the suites run against the controller (before them: see the script).
  TURNPIKE_XDS_CHECK=$(bash e2e/scripts/build-xds-check.sh)
  export TURNPIKE_XDS_CHECK
  # The upstream conformance tests, likewise before the suites (the harness finds it in the cache).
  bash e2e/scripts/build-conformance.sh >/dev/null
  exec node scripts/run-tests.mjs --e2e
fi
exec node scripts/run-tests.mjs
