#!/usr/bin/env bash
# The reserve page on a phone on a slow network: the production build of README command 1 (optimised, hashed,
# precompressed bundle), a fresh SQLite file with the demo data, Chromium throttled through the DevTools protocol
# (slow 4G and 3G, CPU ×4, cold cache, logged in first). Prints a Markdown table (medians of FIELD_RUNS, 5 by
# default) for BENCHMARKS.md, "Current: on a phone on a slow network"; exits 1 when a number shown misses its target.
# Method: docs/benchmarks/field.md.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -z "${SERVER_BIN:-}" ]; then build_site; fi
ensure_chromium
ensure_npm_packages

work="$(mktemp -d)"
port="$(free_port)"
log "starting the server on 127.0.0.1:$port (production bundle, fresh SQLite file)"
(cd "$ROOT" && DATABASE_URL="sqlite://$work/field.db" BOOTSTRAP_ADMIN_PASSWORD="field-admin-pass" \
   RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_IP_PER_MIN=0 RUST_LOG="${RUST_LOG:-warn}" \
   exec "$SERVER_BIN" serve --addr "127.0.0.1:$port") > "$work/server.log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; wait $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
wait_for_health "127.0.0.1:$port" 60 || { cat "$work/server.log"; exit 1; }
DATABASE_URL="sqlite://$work/field.db" "$SERVER_BIN" create-user --username field --password field-staff-pass --role STAFF >/dev/null
cd "$ROOT/end2end"
node field.mjs "http://127.0.0.1:$port" field field-staff-pass "${FIELD_RUNS:-5}"
