#!/usr/bin/env bash
# README command 2: installs what the tests need (wasm32 target, wasm-bindgen-cli, Chromium, npm packages)
# and runs the whole suite: unit and property tests, API tests on a real SQLite file, browser tests, and a
# load-generator check of one hot counter. Exits non-zero on any failure.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

log "unit, property and API tests"
cargo test --features ssr
source "$ROOT/scripts/services.sh"; ensure_mariadb && { log "API tests against MariaDB"; DOCNUM_TEST_DB=mysql cargo test --features ssr --test api; }

build_site
log "browser tests (Playwright, system Chromium)"
bash "$ROOT/scripts/e2e.sh"

log "load generator: 5,000 reserves from 64 callers on one counter, every number checked"
"$LOADGEN_BIN" --embedded --concurrency 64 --requests 5000

log "all tests passed"
