#!/usr/bin/env bash
# README command 1: build and run the service on the embedded default (SQLite file, in-process lock,
# demo data). Installs the wasm32 target, wasm-bindgen-cli and wasm-opt (npm binaryen) when missing.
#   scripts/run.sh            the production browser bundle (optimised, hashed names, precompressed), debug server
#   scripts/run.sh --release  the same with a release server
#   scripts/run.sh --dev      the quick debug loop: debug WASM, no wasm-opt, no hashing, no compression
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ADDR="${LISTEN_ADDR:-127.0.0.1:3000}"
export DATABASE_URL="${DATABASE_URL:-sqlite://$ROOT/docnum.db}"
export BOOTSTRAP_ADMIN_PASSWORD="${BOOTSTRAP_ADMIN_PASSWORD:-admin-demo-2568}"
build_site "$@"
cat <<MSG

  Document numbering service:  http://$ADDR
  Log in as:                   admin / $BOOTSTRAP_ADMIN_PASSWORD   (super admin; set BOOTSTRAP_ADMIN_PASSWORD before the first run to choose it)
                               The demo password works on loopback only: beyond it, set your own first
                               (docnum set-password --username admin, or /account).
  Database:                    $DATABASE_URL   (demo data loaded on first run; DEMO_DATA=false to skip)
  REST API:                    http://$ADDR/api/v1/openapi.json

MSG
cd "$ROOT"
exec "$SERVER_BIN" serve --addr "$ADDR"
