#!/usr/bin/env bash
# README command 2: installs what the tests need (wasm32 target, wasm-bindgen-cli, Chromium, npm packages,
# MariaDB and Redis when missing) and runs the whole suite: formatting and clippy, unit and property tests, API tests on a real
# SQLite file and on MariaDB, the distributed lock against real Redis servers, several processes on one
# counter, browser tests, API fuzzing (Schemathesis), and a load-generator check of one hot counter. Exits non-zero on any failure;
# with CI set, a service that cannot start is a failure, never a skip. Every process of our code the suite starts is built
# for coverage (cargo-llvm-cov), and the run fails when the lines covered fall under the floors of scripts/coverage.py;
# COVERAGE=0 skips that (a quicker local run). The browser bundle builds beside the server's build and tests.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"

ensure_redis || true   # the Redis tests start their own servers; this makes sure redis-server is installed
# MariaDB first, before anything installs in the background: two apt-gets at once would fight over dpkg's lock
have_mariadb=0; if ensure_mariadb; then have_mariadb=1; fi

lint
# a fresh machine builds everything once: incremental compilation's caches would only cost time there
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi

# Until the tests run, three jobs share the machine. The test build, in the foreground, is the longest path. Beside it:
# the test phases' tools (Chromium, promtool, npm packages, Schemathesis), which wait on the network; and the browser
# bundle with its tools (wasm-bindgen, the split tool, wasm-opt), niced so that it takes the cores the test build leaves
# (it is needed only by the browser tests), in a target directory of its own, without the coverage wrapper.
# rustup's installs first, one after the other (lib.sh, ensure_wasm_target)
ensure_wasm_target
if [ "${COVERAGE:-1}" != 0 ]; then ensure_llvm_tools; fi
tools_log="$(mktemp)"
( ensure_test_tools ) > "$tools_log" 2>&1 &
tools_pid=$!
bundle_log="$(mktemp)"
( renice -n 10 -p "$BASHPID" >/dev/null; ensure_wasm_tools; ensure_wasm_split; ensure_wasm_opt; build_bundle ) > "$bundle_log" 2>&1 &
bundle_pid=$!
# on a failure before they are waited for: their cargo and apt as well as the subshells, and the phases started beside
# the others, so nothing outlives the run
stop_background() {
  [ -z "$bundle_pid" ] || kill_tree "$bundle_pid"; [ -z "$tools_pid" ] || kill_tree "$tools_pid"
  for pid in "${BESIDE_PIDS[@]}"; do kill_tree "$pid"; done
}
trap stop_background EXIT
log "installing the test tools (log: $tools_log) and building the browser bundle (log: $bundle_log) in the background"

if [ "${COVERAGE:-1}" != 0 ]; then
  ensure_coverage_tools
  # our crate alone is instrumented (a compiler wrapper): dependencies build as in any other build; a target directory
  # of its own, because cargo cannot tell an instrumented build of the crate from a plain one
  export CARGO_TARGET_DIR="$CARGO_TARGET_DIR/coverage"
  mkdir -p "$CARGO_TARGET_DIR"
  (cd "$ROOT" && cargo llvm-cov clean --workspace)
  eval "$(cd "$ROOT" && cargo llvm-cov show-env --sh 2>/dev/null)"
  log "coverage: every build and process of the crate from here on is measured (profiles in $CARGO_TARGET_DIR)"
fi

log "building the tests (clippy inside)"
cargo test --features ssr --no-run
log "waiting for the test tools"
wait $tools_pid || true; tools_pid=""   # a tool that did not install is installed again, or fails, by the phase that needs it
cat "$tools_log"
# the builds are done: the two passes side by side keep the two cores about 90 % busy (docs/benchmarks/ci-time.md).
# Tests that need a port refused hold it bound but unlistened (witness.rs), so the other pass cannot take it.
beside "unit, property, API (SQLite), Redis-lock and multi-process tests" cargo test --features ssr
beside "monitoring files: alert rules (promtool check + unit tests), Grafana dashboard queries, Alertmanager routes, the systemd unit" \
  bash "$ROOT/scripts/check-monitoring.sh"
if [ $have_mariadb = 1 ]; then
  # the whole integration binary again, each test on a fresh MariaDB database of its own (tests/it/common.rs)
  beside "every integration test against MariaDB" env DOCNUM_TEST_DB=mysql cargo test --features ssr --test it
fi
together

# The browser bundle, if it is still building, is now the longest path: it gets the cores first. The fuzzer needs the
# server but not the bundle: it starts now, niced, on what the bundle leaves, and runs on beside the browser tests.
# Alone, the fuzzing keeps one core busy for about 110 s, the browser tests three quarters of two for about 220 s
# (docs/benchmarks/ci-time.md). Each starts its own server on a free port and file. Under CI the fuzzer's seed is
# pinned, so that a red run is a change's, not a draw's, and repeats case for case; a run here without CI draws its own
# and explores further (FUZZ_SEED= to draw under CI too).
build_server --as-tested
if [ -n "${CI:-}" ]; then export FUZZ_SEED="${FUZZ_SEED-268991078420021675663921044803631509045}"; fi
renice_tree "$bundle_pid" 0
beside "API fuzzing (Schemathesis): every route of the OpenAPI document, with a token and with the session cookie" \
  nice -n 10 bash "$ROOT/scripts/fuzz-api.sh"

log "waiting for the browser bundle"
if ! wait $bundle_pid; then cat "$bundle_log"; echo "the browser bundle did not build" >&2; exit 1; fi
bundle_pid=""
grep -Ev "^ *(Compiling|Downloaded|Downloading|Updating|Locking|Adding|Blocking) " "$bundle_log" || true
build_server --as-tested   # again, a build with nothing to do: it puts the bundle's hash.txt next to the server
beside "browser tests (Playwright, system Chromium)" bash "$ROOT/scripts/e2e.sh"
together
trap - EXIT
if [ $have_mariadb = 1 ]; then
  log "live screens across two instances (one MariaDB database, Redis): Playwright"
  bash "$ROOT/scripts/e2e-live.sh"
  log "cluster harness (shortened): own MariaDB, 3 Redis, 3 instances, faults under load"
  bash "$ROOT/scripts/cluster.sh"
fi

log "load generator: 5,000 reserves from 64 callers on one counter, every number checked"
"$LOADGEN_BIN" --embedded --concurrency 64 --requests 5000
log "load generator, open model: 5 s at 200 arrivals/s of the requirements' mix (reserves, previews, page loads, abandoned page loads), every number checked"
"$LOADGEN_BIN" --embedded --rate 200 --duration 5 --interval 5

if [ "${COVERAGE:-1}" != 0 ]; then
  log "coverage of lines (cargo llvm-cov report; the floors in scripts/coverage.py)"
  report="$CARGO_TARGET_DIR/coverage.json"
  (cd "$ROOT" && cargo llvm-cov report --json --summary-only --output-path "$report")
  python3 "$ROOT/scripts/coverage.py" "$report"
fi

log "all tests passed"
