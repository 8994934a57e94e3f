#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from Go modules (no prebuilt
# binaries can be downloaded here) and caches them under ~/.cache keyed by version, beside
# kubelet-streaming (kube/cmd/kubelet-streaming: the kubelet's port-forward server for the fake
# kubelet), which is rebuilt alone when its source changes. Prints the directory that holds the binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=$(grep -oE '^\s*k8s\.io/kubernetes v[0-9.]+' "$here/kube/go.mod" | awk '{print $2}')
ETCD_VERSION=$(grep -oE '^\s*go\.etcd\.io/etcd/server/v3 v[0-9.]+' "$here/kube/go.mod" | awk '{print $2}')
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" ]] || { echo "cannot read versions from kube/go.mod" >&2; exit 1; }
out="${XDG_CACHE_HOME:-$HOME/.cache}/turnpike/kube-${K8S_VERSION}-etcd-${ETCD_VERSION}"
streaming_key=$(cat "$here/kube/go.mod" "$here/kube/go.sum" "$here/kube/cmd/kubelet-streaming/main.go" | sha256sum | cut -c1-16)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

# kubelet-streaming into directory $1, with the key of the source it was built from.
build_streaming() {
  echo "building kubelet-streaming into $1" >&2
  (cd "$here/kube" && go build -trimpath -ldflags "-s -w" -o "$1/kubelet-streaming.tmp.$$" ./cmd/kubelet-streaming >&2)
  # A rename, so a concurrent build or reader never sees half a binary.
  mv -f "$1/kubelet-streaming.tmp.$$" "$1/kubelet-streaming"
  echo "$streaming_key" >"$1/kubelet-streaming.key"
}

if [[ -x "$out/kube-apiserver" && -x "$out/kube-controller-manager" && -x "$out/etcd" ]]; then
  if [[ ! -x "$out/kubelet-streaming" || "$(cat "$out/kubelet-streaming.key" 2>/dev/null)" != "$streaming_key" ]]; then
    build_streaming "$out"
  fi
  echo "$out"; exit 0
fi
mkdir -p "$out.tmp"
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
cd "$here/kube"
echo "building kube-apiserver, kube-controller-manager ${K8S_VERSION} and etcd ${ETCD_VERSION} into $out (cold build takes a while)" >&2
go build -p "$(nproc)" -trimpath -ldflags "$ldflags" -o "$out.tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager >&2
go build -trimpath -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
build_streaming "$out.tmp"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
