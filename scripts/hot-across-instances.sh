#!/usr/bin/env bash
# The measurement behind the design for one hot counter served by several instances
# (docs/adr/0021-forwarding-to-the-lock-holder.md). Release build, MariaDB + Redis on loopback, 64 callers,
# one counter, a fresh database per case:
#   1. one instance                                  what one holder of the counter can do
#   2. three instances sharing the counter's lock    today's lock leasing: the lock changes hands in slices
#   3. one instance behind three addresses, two of them socat relays
#                                                    request forwarding's stand-in: two thirds of the requests
#                                                    pay one more loopback hop and process on their way to the holder
#   4. three instances forwarding to the lock's holder (CLUSTER_SECRET): what was built
# and, per case, each instance's lock acquisitions, mean lock wait and mean batch from /metrics.
#   scripts/hot-across-instances.sh
#   BENCH_NO_BUILD=1 BENCH_BIN_DIR=/other/release scripts/hot-across-instances.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --features ssr --bins
REL="${BENCH_BIN_DIR:-$CARGO_TARGET_DIR/release}"
command -v socat >/dev/null || apt-get install -y socat >/dev/null
ensure_mariadb; ensure_redis
W="$(mktemp -d /tmp/docnum-hot.XXXXXX)"
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
N="${HOT_N:-9000}"   # the demo LETTER template shows {SEQ:4}: at most 9,999 numbers per counter

# run LABEL INSTANCES RELAYS [forward]
run() {
  local label="$1" instances="$2" relays="$3" name port p i urls="" servers=() secret=""
  [ "${4:-}" = forward ] && secret="hot-bench-cluster-secret-$RANDOM$RANDOM"
  port="$(free_port)"; name="docnum_hot_$port"
  mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name CHARACTER SET utf8mb4"
  local url="mysql://root@127.0.0.1:3306/$name"
  for i in $(seq 1 "$instances"); do
    p="$port"; [ "$i" -gt 1 ] && p="$(free_port)"
    DATABASE_URL="$url" REDIS_URLS="redis://127.0.0.1:6379" BOOTSTRAP_ADMIN_PASSWORD=bench-admin-pass RATE_LIMIT_TOKEN_PER_MIN=0 CLUSTER_SECRET="$secret" \
      RUST_LOG=error "$REL/docnum" serve --addr "127.0.0.1:$p" > "$W/$p.log" 2>&1 &
    PIDS+=($!)
    wait_for_health "127.0.0.1:$p" 60
    servers+=("$p"); urls="$urls${urls:+,}http://127.0.0.1:$p"
  done
  for i in $(seq 1 "$relays"); do
    p="$(free_port)"
    socat "TCP-LISTEN:$p,bind=127.0.0.1,reuseaddr,fork" "TCP:127.0.0.1:$port" &
    PIDS+=($!)
    urls="$urls,http://127.0.0.1:$p"
  done
  sleep 0.3
  local token out
  token="$(DATABASE_URL="$url" "$REL/docnum" create-token --name hot)"
  out="$("$REL/loadgen" --url "$urls" --token "$token" -c 64 -n "$N" --counters 1 --json 2>&1 | tail -n1)" \
    || { echo "loadgen failed ($label): $out" >&2; exit 1; }
  python3 - "$label" "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[2])
ok = "ok" if r["duplicates"] == 0 and r["nonContiguousCounters"] == 0 and r["failed"] == 0 else f"FAILED {r}"
print(f"| {sys.argv[1]} | {r['ok']:,} | {r['numbersPerSecond']:,.0f} | {r['p50Ms']:.2f} | {r['p95Ms']:.2f} | {r['p99Ms']:.2f} | {r['maxMs']:.1f} | {ok} |")
PY
  for p in "${servers[@]}"; do curl -fsS "http://127.0.0.1:$p/metrics" > "$W/metrics-$p.txt"; done
  python3 - "$W" "$label" "${servers[@]}" <<'PY' >> "$W/per-instance.md"
import re, sys
w, label, ports = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"{label}:\n")
def val(text, name, kind=None):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (kind is None or f'kind="{kind}"' in line):
            total += float(line.rsplit(" ", 1)[1])
    return total
print("| instance | lock acquisitions | mean lock wait ms | batches | mean batch | numbers | jobs forwarded | jobs received |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for i, p in enumerate(ports, 1):
    t = open(f"{w}/metrics-{p}.txt").read()
    n, s = val(t, "docnum_lock_wait_seconds_count", "redis"), val(t, "docnum_lock_wait_seconds_sum", "redis")
    bn, bs = val(t, "docnum_batch_size_count"), val(t, "docnum_batch_size_sum")
    fwd = sum(val(t, 'docnum_forwarded_jobs_total{outcome="%s"}' % o) for o in ("answered", "not_delivered", "unanswered"))
    rcv = val(t, 'docnum_forwarded_jobs_total{outcome="received"}')
    print(f"| {i} | {n:,.0f} | {1000 * s / max(n, 1):.2f} | {bn:,.0f} | {bs / max(bn, 1):.1f} | {bs:,.0f} | {fwd:,.0f} | {rcv:,.0f} |")
print()
PY
  kill "${PIDS[@]}" 2>/dev/null || true; wait "${PIDS[@]}" 2>/dev/null || true; PIDS=()
  mariadb -uroot -h127.0.0.1 -e "DROP DATABASE $name"
}

echo "| case (64 callers, one counter) | numbers | numbers/s | p50 ms | p95 ms | p99 ms | max ms | check |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
run "one instance" 1 0
run "three instances, lock leasing (no CLUSTER_SECRET)" 3 0
run "one instance, two of three addresses relayed (forwarding's stand-in)" 1 2
run "three instances, forwarding to the lock's holder" 3 0 forward
echo
cat "$W/per-instance.md"
echo "servers' logs and scrapes: $W" >&2
