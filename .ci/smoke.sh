#!/usr/bin/env bash
# Starts the compiled binary in demo mode on a free port and checks /healthz, /readyz, one
# chat call with the printed demo key, and that the reference page's and the console's embedded
# assets load.
set -uo pipefail
BIN="$1"
DIR=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env -i PATH="$PATH" HOME="$DIR" DATA_DIR="$DIR/data" PORT="$PORT" HOST=127.0.0.1 "$BIN" >"$DIR/out.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
ok=""
for _ in $(seq 1 60); do
  if grep -q 'curl http' "$DIR/out.log" 2>/dev/null; then ok=1; break; fi
  sleep 0.5
done
[ -n "$ok" ] || { echo "binary did not start"; cat "$DIR/out.log"; exit 1; }
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "healthz failed"; exit 1; }
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "readyz failed"; exit 1; }
KEY=$(grep -o 'sk-gw-[A-Za-z0-9]*' "$DIR/out.log" | head -1)
out=$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
  -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"smoke"}]}') || { echo "chat call failed"; cat "$DIR/out.log"; exit 1; }
echo "$out" | grep -q '"object":"chat.completion"' || { echo "unexpected chat answer: $out"; exit 1; }
page=$(curl -sf "http://127.0.0.1:$PORT/docs") || { echo "/docs failed"; exit 1; }
for ref in $(echo "$page" | grep -o '\(src\|href\)="[^"]*"' | cut -d'"' -f2); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/$ref" || { echo "/docs asset $ref failed"; exit 1; }
done
curl -sf "http://127.0.0.1:$PORT/docs/json" | grep -q '"openapi":"3.1.0"' || { echo "/docs/json is not the OpenAPI 3.1 document"; exit 1; }
console=$(curl -sf "http://127.0.0.1:$PORT/") || { echo "console page / failed"; exit 1; }
refs=$(echo "$console" | grep -o '\(src\|href\)="console/[^"]*"' | cut -d'"' -f2)
[ -n "$refs" ] || { echo "console page names no embedded assets"; exit 1; }
for ref in $refs; do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/$ref" || { echo "console asset $ref failed"; exit 1; }
done
echo "binary smoke test passed"
