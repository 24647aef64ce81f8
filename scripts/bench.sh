#!/usr/bin/env bash
# The numbering benchmarks in one run, side by side: release build, one server process (three in the
# three-instance case) plus the load generator on loopback, a fresh database per case. Prints a Markdown table for BENCHMARKS.md ("Current: bench.sh rows").
#   scripts/bench.sh                 # all cases (needs MariaDB on 127.0.0.1:3306 and Redis on 6379)
#   BENCH_NO_BUILD=1 BENCH_BIN_DIR=/other/release BENCH_ONLY='1,000' scripts/bench.sh   # some cases, another build
#   BENCH_CPU_LATENCY_US=0 scripts/bench.sh   # the same with the CPUs kept out of deep idle states for the run
#     (a PM QoS request on /dev/cpu_dma_latency, root only: what tuned's latency-performance profile does; see
#     docs/benchmarks/idle-wake-ups.md, for why it matters on this virtual machine)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --features ssr --bins
REL="${BENCH_BIN_DIR:-$CARGO_TARGET_DIR/release}"   # BENCH_BIN_DIR: another build's docnum and loadgen (A/B runs)
ensure_mariadb; ensure_redis
W="$(mktemp -d /tmp/docnum-bench.XXXXXX)"
if [ -n "${BENCH_CPU_LATENCY_US:-}" ]; then
  # the request holds while the file stays open; it ends with this script
  python3 -c 'import struct, sys, time
f = open("/dev/cpu_dma_latency", "wb", buffering=0); f.write(struct.pack("i", int(sys.argv[1]))); time.sleep(86400)' "$BENCH_CPU_LATENCY_US" &
  QOS_PID=$!
  trap 'kill $QOS_PID 2>/dev/null || true' EXIT
  sleep 0.5; kill -0 "$QOS_PID" || { echo "cannot hold /dev/cpu_dma_latency (root only)" >&2; exit 1; }
  echo "CPU wake-up latency held at ${BENCH_CPU_LATENCY_US} us for this run" >&2
fi

# case LABEL DB(sqlite|mysql) REDIS(url or "") MAX_BATCH CALLERS COUNTERS REQUESTS [INSTANCES] [forward|ceiling]
# (forward: the instances share CLUSTER_SECRET and send a counter's batches to the instance holding its lock;
#  ceiling: loadgen --ceiling, the HTTP path alone: a token scoped to LCBP3-C4 asks numbers in LCBP3, answered 403)
bench_case() {
  # BENCH_ONLY: a regular expression; only the cases whose label matches run
  if [ -n "${BENCH_ONLY:-}" ] && ! [[ "$1" =~ $BENCH_ONLY ]]; then return 0; fi
  local label="$1" db="$2" redis="$3" max_batch="$4" callers="$5" counters="$6" n="$7" instances="${8:-1}" secret=""
  local mode=() scope=()
  [ "${9:-}" = forward ] && secret="bench-cluster-secret-$RANDOM$RANDOM"
  [ "${9:-}" = ceiling ] && mode=(--ceiling) && scope=(--project LCBP3-C4)
  local port url name
  port="$(free_port)"
  if [ "$db" = sqlite ]; then
    url="sqlite://$W/$port.db"
  else
    name="docnum_bench_$port"
    mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name CHARACTER SET utf8mb4"
    url="mysql://root@127.0.0.1:3306/$name"
  fi
  local pids=() urls="" i p
  for i in $(seq 1 "$instances"); do
    p="$port"; [ "$i" -gt 1 ] && p="$(free_port)"
    DATABASE_URL="$url" REDIS_URLS="$redis" MAX_BATCH="$max_batch" BOOTSTRAP_ADMIN_PASSWORD=bench-admin-pass CLUSTER_SECRET="$secret" \
      RATE_LIMIT_TOKEN_PER_MIN=0 RUST_LOG="${BENCH_LOG:-error}" "$REL/docnum" serve --addr "127.0.0.1:$p" > "$W/$p.log" 2>&1 &
    pids+=($!)
    wait_for_health "127.0.0.1:$p" 60
    urls="$urls${urls:+,}http://127.0.0.1:$p"
  done
  local token
  token="$(DATABASE_URL="$url" "$REL/docnum" create-token --name bench "${scope[@]}")"
  local out
  out="$("$REL/loadgen" --url "$urls" --token "$token" -c "$callers" -n "$n" --counters "$counters" "${mode[@]}" --json | tail -n1)"
  echo "{\"case\": \"$label\", \"result\": $out}" >> "$W/results.jsonl"
  kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  [ "$db" = mysql ] && mariadb -uroot -h127.0.0.1 -e "DROP DATABASE $name"
  python3 - "$label" "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[2])
ok = "ok" if r["duplicates"] == 0 and r["nonContiguousCounters"] == 0 and r["failed"] == 0 else f"FAILED {r}"
print(f"| {sys.argv[1]} | {r['concurrency']} | {r['counters']} | {r['ok']:,} | {r['numbersPerSecond']:,.0f} | {r['p50Ms']:.2f} | {r['p95Ms']:.2f} | {r['p99Ms']:.2f} | {r['maxMs']:.1f} | {ok} |")
PY
}

R="redis://127.0.0.1:6379"
echo "| case | callers | counters | numbers | numbers/s | p50 ms | p95 ms | p99 ms | max ms | check |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
bench_case "HTTP path alone: refused with 403, no counter"  sqlite "" 256 64 1 20000 1 ceiling
bench_case "SQLite, one hot counter"                    sqlite ""   256 1  1    2000
bench_case "SQLite, one hot counter"                    sqlite ""   256 64 1    9000
bench_case "SQLite, 1,000 counters"                     sqlite ""   256 64 1000 20000
bench_case "SQLite, one tx per number (baseline)"       sqlite ""   1   64 1    5000
bench_case "MariaDB + Redis, one hot counter"           mysql  "$R" 256 1  1    2000
bench_case "MariaDB + Redis, one hot counter"           mysql  "$R" 256 64 1    9000
bench_case "MariaDB + Redis, 1,000 counters"            mysql  "$R" 256 64 1000 20000
bench_case "MariaDB + Redis, three instances, one hot counter" mysql "$R" 256 64 1 9000 3
bench_case "MariaDB + Redis, three instances, one hot counter, forwarding to the holder" mysql "$R" 256 64 1 9000 3 forward
bench_case "MariaDB, Redis down (DB-lock fallback)"     mysql  "redis://127.0.0.1:1" 256 64 1 9000
bench_case "MariaDB + Redis, one tx per number (baseline)" mysql "$R" 1 64 1 5000
echo "raw results (with the slowest request's send time) and server logs: $W" >&2
