#!/usr/bin/env bash
# Refreshes the request tables of the upstream Gateway API conformance tests that the route-table
# check runs (packages/xds/test/route-table/conformance/): the version e2e/conformance pins,
# read from the Go module cache. Run again after bumping sigs.k8s.io/gateway-api/conformance.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Gateway API v1.7.0 needs Go >= 1.27: the toolchain comes through the module proxy and is cached.
go_toolchain=go1.27.3
export GOTOOLCHAIN=$go_toolchain GOFLAGS=-mod=mod PATH="$PATH:/usr/local/go/bin"
cd "$root/e2e/conformance"
go mod download sigs.k8s.io/gateway-api/conformance
src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api/conformance)
api=$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)
version=$(go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api/conformance)
out="$root/packages/xds/test/route-table/conformance"
rm -rf "$out/tables" "$out/manifests"
mkdir -p "$out/tables" "$out/manifests/tests"
(cd "$root/scripts/conformance-tables" && go run . "$src" "$out/tables" "$api")
# Keep the tables of tests that send requests, and the manifests they apply. A test whose only
# recorded calls are its own writes (client.Update of a status) sends none.
for table in "$out"/tables/*.json; do
  if [[ $(node -p "JSON.parse(require('fs').readFileSync('$table','utf8')).calls.filter((c) => !c.function.startsWith('client.')).length") == 0 ]]; then
    rm "$table"
    continue
  fi
  for m in $(node -p "JSON.parse(require('fs').readFileSync('$table','utf8')).manifests.join(' ')"); do
    cp "$src/$m" "$out/manifests/$m"
  done
done
cp "$src/base/manifests.yaml" "$out/manifests/base.yaml"
chmod -R u+w "$out"
echo "sigs.k8s.io/gateway-api/conformance $version" > "$out/VERSION"
echo "extract-conformance-tables: $(ls "$out/tables" | wc -l) tests with requests, from $version" >&2
