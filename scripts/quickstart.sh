#!/usr/bin/env bash
# The embedded default: the controller on examples/quickstart (a directory of YAML), no cluster.
# It prints status changes as they happen; edit the files to see them move. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node packages/cli/dist/main.js run --dir examples/quickstart "$@"
