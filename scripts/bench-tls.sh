#!/usr/bin/env bash
# A/B of TLS to the backends (docs/benchmarks/tls.md): one MariaDB and one Redis of this script's own (started here
# on free ports with certificates made by openssl, stopped by PID at the end), one docnum server, the load generator;
# rounds alternate plain / TLS on the same servers, a fresh database each round. Per round: numbers/s, p99, the
# CPU time (user + system) of docnum, mariadbd and redis-server per number, MariaDB's statements per number and the
# service's requests per counter batch.
#   scripts/bench-tls.sh                                   # debug build of this checkout, 4 rounds of each
#   BENCH_BIN_DIR=$CARGO_TARGET_DIR/release BENCH_ROUNDS=6 BENCH_N=20000 scripts/bench-tls.sh
#   BENCH_AB=log … scripts/bench-tls.sh   # the same servers in plain text, the arms the transparency log on and off
#     (LOG_ENABLED); the CPU is read 2 s after the load, once the log's sequencer has taken what was staged
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
BIN="${BENCH_BIN_DIR:-$CARGO_TARGET_DIR/debug}"
ROUNDS="${BENCH_ROUNDS:-4}" N="${BENCH_N:-4000}" CALLERS="${BENCH_CALLERS:-16}" COUNTERS="${BENCH_COUNTERS:-4}"
# a counter issues 9,999 numbers at most (its format's four digits), and a run that asked one for about 9,700 with the
# warm-up's 200 was seen to run out: refuse such a run before starting anything
if [ $(( (N + 200 + COUNTERS - 1) / COUNTERS )) -gt 9600 ]; then
  echo "BENCH_N=$N over BENCH_COUNTERS=$COUNTERS asks a counter for more than 9,600 numbers (with the warm-up's 200): it may run out" >&2; exit 1
fi
[ -x "$BIN/docnum" ] && [ -x "$BIN/loadgen" ] || { echo "no docnum / loadgen in $BIN (cargo build --features ssr --bins)" >&2; exit 1; }
W="$(mktemp -d /tmp/docnum-bench-tls.XXXXXX)"
PIDS=()
# the round's server too: a failed round (one counter asked for more than its 9,999 numbers) exits here, and `wait`
# would wait for it for ever
cleanup() { for p in "${PIDS[@]}" ${app:-}; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

# certificates: a CA and a server certificate for 127.0.0.1
( cd "$W"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout ca.key -out ca.pem \
    -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out server.pem -extfile server.ext 2>/dev/null )

DB_PORT="$(free_port)" REDIS_PORT="$(free_port)" REDIS_TLS_PORT="$(free_port)"
mariadb-install-db --no-defaults --datadir="$W/data" --user=root --auth-root-authentication-method=normal --skip-test-db >/dev/null
/usr/sbin/mariadbd --no-defaults --user=root --datadir="$W/data" --port="$DB_PORT" --bind-address=127.0.0.1 \
  --socket="$W/mysql.sock" --pid-file="$W/mysql.pid" --log-error="$W/mysql.err" --innodb-buffer-pool-size=256M \
  --innodb-flush-log-at-trx-commit=1 --ssl-cert="$W/server.pem" --ssl-key="$W/server.key" --ssl-ca="$W/ca.pem" &
MARIADB_PID=$!; PIDS+=("$MARIADB_PID")
redis-server --port "$REDIS_PORT" --tls-port "$REDIS_TLS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --tls-cert-file "$W/server.pem" --tls-key-file "$W/server.key" --tls-ca-cert-file "$W/ca.pem" --tls-auth-clients no >/dev/null &
REDIS_PID=$!; PIDS+=("$REDIS_PID")
for _ in $(seq 1 120); do mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# statements the database server has run (its own two reads of this counter included)
questions() { mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -N -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
# the service's counter batches so far: the requests they served and how many there were (its /metrics)
batches() { curl -s "http://127.0.0.1:$1/metrics" | awk '/^docnum_batch_size_sum/ {s += $NF} /^docnum_batch_size_count/ {c += $NF} END {printf "%d %d", s, c}'; }
HZ="$(getconf CLK_TCK)"
echo "| round | mode | numbers/s | p99 ms | CPU µs per number (docnum + mariadbd + redis) | docnum | mariadbd | redis | statements per number | requests per batch |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
AB="${BENCH_AB:-tls}"
if [ "$AB" = log ]; then MODES=(log-on log-off); else MODES=(plain tls); fi
for round in $(seq 1 "$ROUNDS"); do
  for mode in "${MODES[@]}"; do
    name="bench_${mode//-/_}_$round"
    mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -e "CREATE DATABASE $name CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    log_enabled=true; [ "$mode" = log-off ] && log_enabled=false
    if [ "$mode" != tls ]; then
      # DISABLED, not sqlx's default PREFERRED: with TLS built in, PREFERRED encrypts (unverified) when the server offers it
      db_url="mysql://root@127.0.0.1:$DB_PORT/$name?ssl-mode=DISABLED"; redis_url="redis://127.0.0.1:$REDIS_PORT"
    else
      db_url="mysql://root@127.0.0.1:$DB_PORT/$name?ssl-mode=VERIFY_IDENTITY&ssl-ca=$W/ca.pem"; redis_url="rediss://127.0.0.1:$REDIS_TLS_PORT/?ssl-ca=$W/ca.pem"
    fi
    port="$(free_port)"
    DATABASE_URL="$db_url" REDIS_URLS="$redis_url" BOOTSTRAP_ADMIN_PASSWORD=bench-admin-pass RATE_LIMIT_TOKEN_PER_MIN=0 \
      LOG_ENABLED="$log_enabled" RUST_LOG=error "$BIN/docnum" serve --addr "127.0.0.1:$port" > "$W/$name.log" 2>&1 &
    app=$!
    wait_for_health "127.0.0.1:$port" 120
    token="$(DATABASE_URL="$db_url" "$BIN/docnum" create-token --name bench 2>/dev/null)"
    # a warm-up, then the measured run
    "$BIN/loadgen" --url "http://127.0.0.1:$port" --token "$token" -c "$CALLERS" -n 200 --counters "$COUNTERS" --json >/dev/null
    a0="$(cpu_ticks "$app")" m0="$(cpu_ticks "$MARIADB_PID")" r0="$(cpu_ticks "$REDIS_PID")" q0="$(questions)" b0="$(batches "$port")"
    out="$("$BIN/loadgen" --url "http://127.0.0.1:$port" --token "$token" -c "$CALLERS" -n "$N" --counters "$COUNTERS" --json | tail -n1)"
    [ "$AB" = log ] && sleep 2
    a1="$(cpu_ticks "$app")" m1="$(cpu_ticks "$MARIADB_PID")" r1="$(cpu_ticks "$REDIS_PID")" q1="$(questions)" b1="$(batches "$port")"
    kill "$app"; wait "$app" 2>/dev/null || true
    mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -e "DROP DATABASE $name"
    python3 - "$round" "$mode" "$out" "$HZ" "$((a1 - a0))" "$((m1 - m0))" "$((r1 - r0))" "$((q1 - q0))" "$b0" "$b1" <<'PY'
import json, sys
rnd, mode, out, hz = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
a, m, r = (int(x) / hz for x in sys.argv[5:8])
q = int(sys.argv[8])
(s0, c0), (s1, c1) = (map(int, b.split()) for b in sys.argv[9:11])
per_batch = (s1 - s0) / max(c1 - c0, 1)
ok = out["ok"] or 1
us = lambda s: s / ok * 1e6
print(f"| {rnd} | {mode} | {out['numbersPerSecond']:.0f} | {out['p99Ms']:.1f} | {us(a + m + r):.0f} | {us(a):.0f} | {us(m):.0f} | {us(r):.0f} | {q / ok:.2f} | {per_batch:.1f} |")
PY
  done
done
