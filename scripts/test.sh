#!/usr/bin/env bash
# README command 2: installs what the tests need (wasm32 target, wasm-bindgen-cli, Chromium, npm packages,
# MariaDB and Redis when missing) and runs the whole suite: formatting and clippy, unit and property tests, API tests on a real
# SQLite file and on MariaDB, the distributed lock against real Redis servers, several processes on one
# counter, browser tests, API fuzzing (Schemathesis), and a load-generator check of one hot counter. Exits non-zero on any failure;
# with CI set, a service that cannot start is a failure, never a skip.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"

ensure_redis || true   # the Redis tests start their own servers; this makes sure redis-server is installed

lint

log "unit, property, API (SQLite), Redis-lock and multi-process tests"
cargo test --features ssr

# --- observability (docs/operations/README.md#metrics-and-alerts): /metrics on MariaDB too; alert rules and dashboard checked with promtool ---
if ensure_mariadb; then
  log "metrics tests against MariaDB"
  DOCNUM_TEST_DB=mysql cargo test --features ssr --test it -- metrics::
fi
log "monitoring files: alert rules (promtool check + unit tests), Grafana dashboard queries"
bash "$ROOT/scripts/check-monitoring.sh"
# --- end observability ---

if ensure_mariadb; then
  log "API and Redis-lock tests against MariaDB"
  # import: bulk and reference-data imports; then logins, isolation, per-type defaults, probes, the audit view, the requirements' paths, commits shared across counters,
  # the whole-database check on a live database, a database of an earlier schema migrated, the prune, idempotency keys,
  # the restore drill (a mariadb-dump backup loaded back: the witness refuses, a super admin resumes), the statistics of /charts, the live screens' event stream, the webhooks' delivery, the staff pages' forms without scripts,
  # TLS to Redis and webhook receivers (the MariaDB-over-TLS tests start a server of their own either way), where webhooks
  # may point, the secrets (sealed at rest on MariaDB's widened column); the partial rows (the CHECK on a period's form, a project derived from its originator, recipients);
  # contracts (a project's contracts, one counter per contract, the widened period CHECK)
  DOCNUM_TEST_DB=mysql cargo test --features ssr --test it -- api:: redis_lock:: admin_ops:: import:: \
    login:: isolation:: defaults:: probes:: audit_view:: seed_paths:: committer:: check:: migrations:: retention:: idempotency:: restore:: stats:: live:: notifications:: forms:: \
    tls:: webhook_targets:: secrets:: partial_rows:: contracts::
fi

build_site --as-tested
log "browser tests (Playwright, system Chromium)"
bash "$ROOT/scripts/e2e.sh"
if ensure_mariadb; then
  log "live screens across two instances (one MariaDB database, Redis): Playwright"
  bash "$ROOT/scripts/e2e-live.sh"
fi
log "API fuzzing (Schemathesis): every route of the OpenAPI document, with a token and with the session cookie"
# under CI the fuzzer's seed is pinned, so that a red run is a change's, not a draw's, and repeats case for case; a run
# here without CI draws its own and explores further (FUZZ_SEED= to draw under CI too)
if [ -n "${CI:-}" ]; then export FUZZ_SEED="${FUZZ_SEED-268991078420021675663921044803631509045}"; fi
bash "$ROOT/scripts/fuzz-api.sh"

if ensure_mariadb; then
  log "cluster harness (shortened): own MariaDB, 3 Redis, 3 instances, faults under load"
  bash "$ROOT/scripts/cluster.sh"
fi

log "load generator: 5,000 reserves from 64 callers on one counter, every number checked"
"$LOADGEN_BIN" --embedded --concurrency 64 --requests 5000

log "all tests passed"
