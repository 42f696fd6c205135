#!/usr/bin/env bash
# Builds the single self-contained binary: the gateway, its worker entries (Bun needs each
# Worker file as an extra entrypoint), the migrations, the catalog, the web console and PGlite's
# files embedded.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN="${BUN:-./node_modules/.bin/bun}"
[ -x "$BUN" ] || BUN=bun
workers=$(find src -name '*.worker.ts' | sort)
# `gateway --version` names the commit: GATEWAY_COMMIT (the Docker build passes it, having no
# .git), else the checkout's.
commit="${GATEWAY_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || true)}"
define=()
if [[ "$commit" =~ ^[0-9a-zA-Z._-]+$ ]]; then define=(--define "GATEWAY_COMMIT=\"$commit\""); fi
mkdir -p dist
# The web console: bundled, compressed, size-checked (fails over the JS budget), then embedded.
"$BUN" src/console/prebuild.ts dist/console
"$BUN" build --compile --minify --sourcemap --bytecode --format=esm "${define[@]}" \
  src/main.ts $workers --asset ./drizzle --asset ./dist/console --outfile "${1:-dist/gateway}"
