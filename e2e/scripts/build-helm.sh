#!/usr/bin/env bash
# Builds the helm CLI from Go modules (no prebuilt binaries can be downloaded here), at the version
# e2e/helm/go.mod pins, and caches it under ~/.cache keyed by that version. Prints the binary's path.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
HELM_VERSION=$(grep -oE '^\s*(require\s+)?helm\.sh/helm/v4 v[0-9.]+' "$here/helm/go.mod" | awk '{print $NF}')
[[ -n "$HELM_VERSION" ]] || { echo "cannot read the helm version from helm/go.mod" >&2; exit 1; }
out="${XDG_CACHE_HOME:-$HOME/.cache}/turnpike/helm-${HELM_VERSION}"
if [[ -x "$out/helm" ]]; then
  echo "$out/helm"; exit 0
fi
mkdir -p "$out.tmp"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
cd "$here/helm"
echo "building helm ${HELM_VERSION} into $out (cold build takes a few minutes)" >&2
go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}" -o "$out.tmp/helm" helm.sh/helm/v4/cmd/helm >&2
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out/helm"
