#!/usr/bin/env bash
# The compiled binary on PostgreSQL: migrations, an account, a key, a chat call and a video job
# finished by the poller Worker (a Worker entry missing from the binary fails here). Outside demo
# mode the simulator answers only with SIMULATOR=on, which the start must warn about.
set -uo pipefail
BIN="$1"
DB="gw_smoke_$$"
DIR=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
psql -h 127.0.0.1 -U postgres -qc "create database $DB" >/dev/null || exit 1
ADMIN=smoke-admin-token-0123456789
env -i PATH="$PATH" HOME="$DIR" DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB" ADMIN_TOKEN=$ADMIN DATA_DIR="$DIR/data" \
  PORT="$PORT" HOST=127.0.0.1 VIDEO_POLL_INITIAL_MS=200 SIMULATOR=on "$BIN" >"$DIR/out.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; psql -h 127.0.0.1 -U postgres -qc "drop database if exists $DB with (force)" >/dev/null; rm -rf "$DIR"' EXIT
B="http://127.0.0.1:$PORT"
for _ in $(seq 1 60); do curl -sf "$B/readyz" >/dev/null && break; sleep 0.5; done
curl -sf "$B/readyz" >/dev/null || { echo "binary on PostgreSQL did not become ready"; cat "$DIR/out.log"; exit 1; }
grep -q '"level":"warn","msg":"SIMULATOR=on' "$DIR/out.log" || { echo "no SIMULATOR=on warning at start"; cat "$DIR/out.log"; exit 1; }
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
USER_ID=$(curl -sf "$B/v1/auth/signup" -H 'content-type: application/json' -d '{"email":"smoke@example.com","password":"password123"}' | json '["user_id"]') || exit 1
curl -sf -XPOST "$B/v1/admin/users/$USER_ID/topups" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' -d '{"amount_krw":100000}' >/dev/null || exit 1
JWT=$(curl -sf "$B/v1/auth/login" -H 'content-type: application/json' -d '{"email":"smoke@example.com","password":"password123"}' | json '["access_token"]') || exit 1
KEY=$(curl -sf -XPOST "$B/v1/keys" -H "authorization: Bearer $JWT" -H 'content-type: application/json' -d '{}' | json '["key"]') || exit 1
curl -sf "$B/v1/chat/completions" -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"smoke"}]}' | grep -q '"chat.completion"' || { echo "chat failed"; exit 1; }
JOB=$(curl -sf "$B/v1/video/generations" -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"model":"veo-3","prompt":"smoke [sim:video_ms=300]","duration_seconds":8}' | json '["job_id"]') || { echo "video submit failed"; exit 1; }
for _ in $(seq 1 40); do
  st=$(curl -sf "$B/v1/jobs/$JOB" -H "authorization: Bearer $KEY" | json '["status"]')
  [ "$st" = "succeeded" ] && break
  sleep 0.5
done
[ "$st" = "succeeded" ] || { echo "video job stuck at $st"; tail -20 "$DIR/out.log"; exit 1; }
echo "binary smoke test on PostgreSQL passed"
