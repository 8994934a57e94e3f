#!/usr/bin/env bash
# Installs what the project needs on a fresh machine with Node 20: pnpm (the version pinned in
# package.json, through corepack, or npm when corepack cannot), the workspace dependencies, and
# the build. Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0
# Corepack's signature check fails against registry mirrors; integrity is still checked by the lockfile.
export COREPACK_INTEGRITY_KEYS=0
want=$(node -p "require('./package.json').packageManager.split('@')[1]")
if ! command -v pnpm >/dev/null 2>&1 || [[ "$(pnpm --version 2>/dev/null)" != "$want" ]]; then
  corepack enable pnpm >/dev/null 2>&1 || true
  if [[ "$(pnpm --version 2>/dev/null)" != "$want" ]]; then
    npm install -g "pnpm@$want" >/dev/null
  fi
fi
pnpm install --frozen-lockfile --reporter=silent
pnpm run build
