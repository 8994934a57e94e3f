#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from Go modules (no prebuilt
# binaries can be downloaded here) and caches them under ~/.cache keyed by version.
# Prints the directory that holds the binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=$(grep -oE '^\s*k8s\.io/kubernetes v[0-9.]+' "$here/kube/go.mod" | awk '{print $2}')
ETCD_VERSION=$(grep -oE '^\s*go\.etcd\.io/etcd/server/v3 v[0-9.]+' "$here/kube/go.mod" | awk '{print $2}')
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" ]] || { echo "cannot read versions from kube/go.mod" >&2; exit 1; }
out="${XDG_CACHE_HOME:-$HOME/.cache}/turnpike/kube-${K8S_VERSION}-etcd-${ETCD_VERSION}"
if [[ -x "$out/kube-apiserver" && -x "$out/kube-controller-manager" && -x "$out/etcd" ]]; then
  echo "$out"; exit 0
fi
mkdir -p "$out.tmp"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
cd "$here/kube"
echo "building kube-apiserver, kube-controller-manager ${K8S_VERSION} and etcd ${ETCD_VERSION} into $out (cold build takes a while)" >&2
go build -p "$(nproc)" -trimpath -ldflags "$ldflags" -o "$out.tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager >&2
go build -trimpath -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
