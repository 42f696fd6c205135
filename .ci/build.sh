#!/usr/bin/env bash
# Builds the single self-contained binary: the gateway, its worker entries (Bun needs each
# Worker file as an extra entrypoint), the migrations, the catalog and PGlite's files embedded.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN="${BUN:-./node_modules/.bin/bun}"
[ -x "$BUN" ] || BUN=bun
workers=$(find src -name '*.worker.ts' | sort)
mkdir -p dist
"$BUN" build --compile --minify --sourcemap --bytecode --format=esm \
  src/main.ts $workers --asset ./drizzle --outfile "${1:-dist/gateway}"
