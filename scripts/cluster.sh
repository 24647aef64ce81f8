#!/usr/bin/env bash
# Cluster harness (loopback only, bounded in time and count): its own MariaDB primary and semi-synchronous replica
# (deploy/mariadb) on their own ports, three Redis servers, three app instances; drives reserve / confirm / cancel over
# all instances on one hot counter and many cold ones; then fault scenarios, each under load: one Redis of three
# killed, all Redis killed (the database-lock fallback) and brought back, MariaDB restarted, one app instance kill -9'd,
# one Redis stalled (SIGSTOP) for longer than the lock TTL and resumed, and two database failovers (the primary
# kill -9'd, the replica promoted, the old primary rejoined; then the other way). After each phase
# `docnum check` proves: no number twice, every sequence 1..last issued or explained in the audit log, the
# audit chains intact, every number any caller received still on record, and the transparency log holding each
# numbering event once with checkpoints consistent; and a received number's receipt verifies with the log's key.
#
#   scripts/cluster.sh            # the shortened run that CI does (~30,000 requests)
#   CLUSTER_SCALE=10 scripts/cluster.sh   # ~180,000 requests
#   CLUSTER_SCALE=60 scripts/cluster.sh   # the million-number run (1,080,000 reserves, ~1,020,000 numbers: the instance
#                                         # killed in phase 5 refuses a third of its phase; docs/benchmarks/fault-runs.md)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SCALE="${CLUSTER_SCALE:-1}"
[ -n "${SERVER_BIN:-}" ] || build_site
W="$(mktemp -d /tmp/docnum-cluster.XXXXXX)"
PIDS=()
declare -A DB_PID
cleanup() {
  for p in "${PIDS[@]}" "${DB_PID[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# --- MariaDB of our own: a primary and a semi-synchronous replica (deploy/mariadb, docs/operations/README.md#failover) ---------------
# Both read deploy/mariadb/replication.cnf as an operator's servers would, and start read-only; the primary is made
# writable as promote.sh would. The instances are given both (DATABASE_SERVERS) and write to the writable one.
DB_PORT="$(free_port)"; DB2_PORT="$(free_port)"
# start_mariadb PORT [mariadbd options…]: the server of that port on its own data directory
start_mariadb() {
  local port="$1"; shift
  # a tmpdir of its own: a starting mariadbd deletes every `#sql*` file in its tmpdir, another server's temporary tables too
  /usr/sbin/mariadbd --defaults-file="$ROOT/deploy/mariadb/replication.cnf" --user=root --datadir="$W/mysql-$port" --port="$port" --tmpdir="$W/tmp-$port" \
    --bind-address=127.0.0.1 --socket="$W/mysql-$port.sock" --pid-file="$W/mysql-$port.pid" --log-error="$W/mysql-$port.err" \
    --server-id="$port" --innodb-buffer-pool-size=256M --max-connections=500 "$@" &
  DB_PID[$port]=$!
  for _ in $(seq 1 120); do mariadb -uroot -h127.0.0.1 -P"$port" -e 'select 1' >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "own MariaDB on $port did not start"; cat "$W/mysql-$port.err"; return 1
}
# as_primary PORT: the server takes writes (a server restarted in place as the primary, or the first primary)
as_primary() { mariadb -uroot -h127.0.0.1 -P"$1" -e 'SET GLOBAL rpl_semi_sync_master_enabled = ON; SET GLOBAL read_only = OFF'; }
replica_of() { "$ROOT/deploy/mariadb/rejoin.sh" 127.0.0.1 "$1" 127.0.0.1 "$2" repl repl-pass -uroot; }
# replica_running PORT PHASE: the replica applies what it receives (a stopped applier would make a promotion lose commits)
replica_running() {
  local status; status="$(mariadb -uroot -h127.0.0.1 -P"$1" -e 'SHOW SLAVE STATUS\G')"
  if ! grep -q 'Slave_SQL_Running: Yes' <<< "$status"; then echo "[$2] the replica stopped applying:"; grep -E 'Running|Error' <<< "$status"; exit 1; fi
}
log "cluster: own MariaDB primary on 127.0.0.1:$DB_PORT, semi-sync replica on 127.0.0.1:$DB2_PORT ($W)"
for port in "$DB_PORT" "$DB2_PORT"; do
  mkdir -p "$W/tmp-$port"
  mariadb-install-db --no-defaults --datadir="$W/mysql-$port" --tmpdir="$W/tmp-$port" --user=root --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
  start_mariadb "$port"
done
as_primary "$DB_PORT"
# the service's user has no global privilege (read_only stops it too); the replicas' has REPLICATION SLAVE alone
mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -e "CREATE DATABASE docnum CHARACTER SET utf8mb4;
  CREATE USER 'docnum'@'127.0.0.1' IDENTIFIED BY 'docnum-pass'; GRANT ALL ON docnum.* TO 'docnum'@'127.0.0.1';
  CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl-pass'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'"
replica_of "$DB2_PORT" "$DB_PORT"
REPLICA="$DB2_PORT"
export DATABASE_URL="mysql://docnum:docnum-pass@127.0.0.1:$DB_PORT/docnum" DATABASE_SERVERS="127.0.0.1:$DB_PORT,127.0.0.1:$DB2_PORT"

# --- three Redis servers -------------------------------------------------------------------------------
REDIS_PORTS=("$(free_port)" "$(free_port)" "$(free_port)")
declare -A REDIS_PID
start_redis() { redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no --logfile "$W/redis-$1.log" & REDIS_PID[$1]=$!; PIDS+=($!); disown $!; }
for p in "${REDIS_PORTS[@]}"; do start_redis "$p"; done
sleep 0.5
REDIS_URLS="$(printf 'redis://127.0.0.1:%s,' "${REDIS_PORTS[@]}")"; export REDIS_URLS="${REDIS_URLS%,}"

# --- three app instances -------------------------------------------------------------------------------
# they forward a counter's batches to the instance holding its lock (CLUSTER_FORWARD=0: each takes the lock in turn)
[ "${CLUSTER_FORWARD:-1}" = 0 ] || export CLUSTER_SECRET="cluster-harness-secret-$RANDOM$RANDOM"
# one signer key for the log of all three, as in production (each would make its own otherwise)
export LOG_ORIGIN=cluster.docnum.test/log LOG_SIGNING_KEY_FILE="$W/log.key"
LOG_KEY="$("$SERVER_BIN" log-keygen "$LOG_SIGNING_KEY_FILE")"
APP_PORTS=("$(free_port)" "$(free_port)" "$(free_port)")
declare -A APP_PID
start_app() {
  (cd "$ROOT" && BOOTSTRAP_ADMIN_PASSWORD=cluster-admin-pass RATE_LIMIT_TOKEN_PER_MIN=0 LOCK_RETRY_BASE_MS=2 \
     RUST_LOG="${RUST_LOG:-warn}" exec "$SERVER_BIN" serve --addr "127.0.0.1:$1") >> "$W/app-$1.log" 2>&1 &
  APP_PID[$1]=$!; PIDS+=($!)
  wait_for_health "127.0.0.1:$1" 60
}
for p in "${APP_PORTS[@]}"; do start_app "$p"; done
URLS="$(printf 'http://127.0.0.1:%s,' "${APP_PORTS[@]}")"; URLS="${URLS%,}"
TOKEN="$("$SERVER_BIN" create-token --name cluster-harness)"
log "cluster: 3 instances (${APP_PORTS[*]}), Redis quorum of 3 (${REDIS_PORTS[*]})"
# The hot counter (loadgen's counter 0: project LCBP3, LETTER) takes every phase's hot load: give it room
# past 9,999 with {SEQ:8} (same parts shown, so the same counter continues).
B="http://127.0.0.1:${APP_PORTS[0]}"
curl -fsS -c "$W/cookies" -H 'content-type: application/json' -d '{"username":"admin","password":"cluster-admin-pass"}' "$B/api/v1/auth/login" >/dev/null
ids="$(curl -fsS -b "$W/cookies" "$B/api/v1/reference/projects" | python3 -c 'import json,sys; print(next(p["id"] for p in json.load(sys.stdin) if p["code"]=="LCBP3"))') $(curl -fsS -b "$W/cookies" "$B/api/v1/reference/correspondence-types" | python3 -c 'import json,sys; print(next(t["id"] for t in json.load(sys.stdin) if t["code"]=="LETTER"))')"
read -r project_id letter_id <<< "$ids"
# a cookie-authenticated change must name the service's own Origin, like a browser does (docs/rules/api.md#callers-and-authentication: CSRF)
curl -fsS -b "$W/cookies" -H "Origin: $B" -H 'content-type: application/json' "$B/api/v1/document-numbering/configs" \
  -d "{\"projectId\":$project_id,\"correspondenceTypeId\":$letter_id,\"template\":\"{ORIGINATOR}-{RECIPIENT}-{SEQ:8}-{YEAR:B.E.}\",\"resetScope\":\"YEARLY\",\"reason\":\"cluster harness: room for long runs\"}" >/dev/null

RECORDS="$W/received.tsv"; : > "$RECORDS"
# load NAME HOT COLD: one hot counter and 300 cold ones at once, reserve then confirm 50 % / cancel 10 %
load() {
  local name="$1" hot="$2" cold="$3"
  "$LOADGEN_BIN" --url "$URLS" --token "$TOKEN" -c 32 -n "$hot" --counters 1 --confirm-ratio 0.5 --cancel-ratio 0.1 \
    --allow-errors --record "$W/$name-hot.tsv" --max-seconds 600 > "$W/$name-hot.out" 2>&1 &
  local hot_pid=$!
  "$LOADGEN_BIN" --url "$URLS" --token "$TOKEN" -c 32 -n "$cold" --first-counter 1 --counters 300 --confirm-ratio 0.5 --cancel-ratio 0.1 \
    --allow-errors --record "$W/$name-cold.tsv" --max-seconds 600 > "$W/$name-cold.out" 2>&1 &
  LOAD_PIDS=("$hot_pid" $!)
}
finish() {
  local name="$1" status=0
  for p in "${LOAD_PIDS[@]}"; do wait "$p" || status=1; done
  cat "$W/$name-hot.tsv" "$W/$name-cold.tsv" >> "$RECORDS"
  echo "[$name] hot:  $(head -n1 "$W/$name-hot.out")"
  echo "[$name] cold: $(head -n1 "$W/$name-cold.out")"
  grep -h "errors" "$W/$name-hot.out" "$W/$name-cold.out" | sed "s/^/[$name]   /" || true
  if [ $status -ne 0 ]; then echo "[$name] loadgen found duplicate numbers"; cat "$W/$name-hot.out" "$W/$name-cold.out"; exit 1; fi
  # errors are allowed under faults, not a phase that issued (almost) nothing: once every reserve "failed" because the
  # load generator could not read the answers, and every check still passed
  local out ok sent
  for out in "$W/$name-hot.out" "$W/$name-cold.out"; do
    read -r ok sent < <(head -n1 "$out" | sed -nE 's/.* ([0-9]+) ok, ([0-9]+) failed.*/\1 \2/p' | awk '{print $1, $1 + $2}')
    if [ -z "$ok" ] || [ $((ok * 2)) -lt "$sent" ]; then
      echo "[$name] fewer than half of the requests were answered with a number ($ok of $sent): $(head -n1 "$out")"; exit 1
    fi
  done
}
check() {
  local name="$1"
  if ! "$SERVER_BIN" check --received "$RECORDS" > "$W/$name-check.json"; then
    echo "[$name] CHECK FAILED"; cat "$W/$name-check.json"; exit 1
  fi
  python3 - "$W/$name-check.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"[{sys.argv[2]}] check: numbers {r['numbers']} (confirmed {r['confirmed']}, cancelled {r['cancelled']}, reserved {r['reserved']}) "
      f"in {r['counters']} counters; duplicates = {r['duplicates']}, unexplained gaps = {r['unexplainedGaps']}, "
      f"received {r['receivedChecked']} / missing {r['receivedMissing']}, audit rows {r['auditRows']} intact = {r['auditOk']}")
t = r['transparencyLog']
print(f"[{sys.argv[2]}] log: entries {t['entries']} (pending {t['pending']}), events missing {t['missing']}, extra {t['extra']}, "
      f"checkpoints {t['checkpoints']} consistent = {t['checkpointsConsistent']}")
PY
  receipt_verifies "$name"
  forwarded "$name"
  [ -z "${REPLICA:-}" ] || replica_running "$REPLICA" "$name"
}
# receipt_verifies PHASE: the last number a caller of the hot counter received has a receipt (C2SP tlog-proof) that
# `docnum verify` accepts with nothing but the log's key; the sequencer and the next checkpoint get 30 s
receipt_verifies() {
  local number query code=""
  number="$(tail -n1 "$W/$1-hot.tsv" | cut -f1)"
  query="projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$number")"
  for _ in $(seq 1 150); do
    code="$(curl -s -o "$W/$1.tlog-proof" -w '%{http_code}' "$B/api/v1/document-numbering/receipts?$query" || true)"
    [ "$code" = 200 ] && break
    sleep 0.2
  done
  [ "$code" = 200 ] || { echo "[$1] RECEIPT of $number: HTTP $code: $(cat "$W/$1.tlog-proof")"; exit 1; }
  if ! "$SERVER_BIN" verify "$W/$1.tlog-proof" --key "$LOG_KEY" > "$W/$1-verify.json"; then
    echo "[$1] RECEIPT of $number DOES NOT VERIFY"; cat "$W/$1-verify.json" "$W/$1.tlog-proof"; exit 1
  fi
  python3 - "$W/$1-verify.json" "$1" "$number" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
if not v["valid"] or v["number"] != sys.argv[3]:
    sys.exit(f"[{sys.argv[2]}] the receipt is of {v['number']}, not {sys.argv[3]}")
print(f"[{sys.argv[2]}] receipt of {v['number']}: verifies with the log's key alone ({v['event']}, entry {v['index']} of a tree of {v['treeSize']})")
PY
}
# forwarded PHASE: the counter jobs the live instances forwarded to a lock's holder since they started (/metrics)
forwarded() {
  local p
  for p in "${APP_PORTS[@]}"; do curl -fsS --max-time 2 "http://127.0.0.1:$p/metrics" 2>/dev/null || true; done | python3 -c '
import re, sys
n = {}
for line in sys.stdin:
    m = re.match(r"docnum_forwarded_jobs_total\{outcome=\"(\w+)\"\} (\S+)", line)
    if m: n[m.group(1)] = n.get(m.group(1), 0) + float(m.group(2))
a, d, u, r = (n.get(k, 0) for k in ("answered", "not_delivered", "unanswered", "received"))
print(f"[{sys.argv[1]}] jobs forwarded to a lock holder (live instances, since their start): answered {a:,.0f}, "
      f"not delivered {d:,.0f}, unanswered {u:,.0f}; received {r:,.0f}")
' "$1"
}
# ready_is STATUS PHASE: /health/ready of the first instance answers STATUS within 30 s (docs/operations/README.md#metrics-and-alerts probes)
ready_is() {
  local want="$1" phase="$2" code=""
  for _ in $(seq 1 150); do
    code="$(curl -s -o "$W/ready.json" -w '%{http_code}' "$B/health/ready" || true)"
    if [ "$code" = "$want" ]; then echo "[$phase] /health/ready $code: $(cat "$W/ready.json")"; return 0; fi
    sleep 0.2
  done
  echo "[$phase] /health/ready answered $code, expected $want: $(cat "$W/ready.json" 2>/dev/null)"; exit 1
}
fallbacks() { mariadb -uroot -h127.0.0.1 -P"$DB_PORT" -N -e "SELECT COUNT(*) FROM docnum.audit_log WHERE fallback_used = 'DB_LOCK'"; }

HOT=$((1000 * SCALE)); COLD=$((2000 * SCALE))
log "phase 1: normal load"
load normal "$HOT" "$COLD"; finish normal; check normal

log "phase 2: one Redis of three killed under load (the quorum holds)"
load one-redis "$HOT" "$COLD"; sleep 1
kill -9 "${REDIS_PID[${REDIS_PORTS[0]}]}"
finish one-redis; check one-redis
echo "[one-redis] database-lock fallbacks so far: $(fallbacks)"
start_redis "${REDIS_PORTS[0]}"

log "phase 3: all Redis killed under load (database-lock fallback), then brought back"
before="$(fallbacks)"
load no-redis "$HOT" "$COLD"; sleep 1
for p in "${REDIS_PORTS[@]}"; do kill -9 "${REDIS_PID[$p]}"; done
ready_is 503 no-redis   # Redis configured and gone: not ready (numbering goes on through the database lock)
sleep 2
for p in "${REDIS_PORTS[@]}"; do start_redis "$p"; done
ready_is 200 no-redis
finish no-redis; check no-redis
after="$(fallbacks)"
echo "[no-redis] audit rows written under the database-lock fallback during the outage: $((after - before))"
[ "$((after - before))" -gt 0 ] || { echo "[no-redis] expected database-lock fallbacks"; exit 1; }

log "phase 4: MariaDB restarted under load (errors, then recovery, nothing lost)"
load db-restart "$HOT" "$COLD"; sleep 1
kill -TERM "${DB_PID[$DB_PORT]}"; wait "${DB_PID[$DB_PORT]}" 2>/dev/null || true
ready_is 503 db-restart   # the database gone: not ready
sleep 1
start_mariadb "$DB_PORT"
as_primary "$DB_PORT"     # restarted in place: read-only (replication.cnf) until the operator says it is the primary
ready_is 200 db-restart
finish db-restart; check db-restart

log "phase 5: one app instance kill -9'd under load"
load kill-app "$HOT" "$COLD"; sleep 1
kill -9 "${APP_PID[${APP_PORTS[1]}]}"
finish kill-app; check kill-app
start_app "${APP_PORTS[1]}"

log "phase 6: one Redis of three stalled (SIGSTOP) for longer than the lock TTL, then resumed"
load redis-stall "$HOT" "$COLD"; sleep 1
kill -STOP "${REDIS_PID[${REDIS_PORTS[2]}]}"
sleep 7   # past the 5 s TTL: every lock that server held has expired meanwhile
kill -CONT "${REDIS_PID[${REDIS_PORTS[2]}]}"
finish redis-stall; check redis-stall

# failover NAME OLD NEW: the primary OLD kill -9'd under load; NEW (its replica) promoted by deploy/mariadb/promote.sh
# after a second (an operator's reaction at its quickest); the instances go on on NEW by themselves; OLD restarted
# with --init-rpl-role=SLAVE and rejoined as NEW's replica. Reports the time from the kill to the first number
# received after it, and checks that OLD, caught up, holds every number NEW holds.
failover() {
  local name="$1" old="$2" new="$3"
  load "$name" "$((2 * HOT))" "$((2 * COLD))"; sleep 1
  REPLICA=""   # the replica is promoted below
  kill -9 "${DB_PID[$old]}"; wait "${DB_PID[$old]}" 2>/dev/null || true
  local killed; killed="$(date +%s%3N)"
  sleep 1
  "$ROOT/deploy/mariadb/promote.sh" 127.0.0.1 "$new" -uroot
  local promoted; promoted="$(date +%s%3N)"
  finish "$name"; check "$name"
  python3 - "$W/$name-hot.tsv" "$W/$name-cold.tsv" "$killed" "$promoted" "$name" <<'PY'
import sys
killed, promoted, name = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
times = [int(l.split("\t")[3]) for f in sys.argv[1:3] for l in open(f) if l.strip()]
after = [t for t in times if t > killed]
if not after:
    sys.exit(f"[{name}] no number was received after the kill")
first = min(after)
print(f"[{name}] numbers received: {len(times)}, after the kill: {len(after)}; kill -> promoted {promoted - killed} ms, "
      f"kill -> first number received {first - killed} ms (promoted -> first number {first - promoted} ms)")
PY
  start_mariadb "$old" --init-rpl-role=SLAVE
  replica_of "$old" "$new"
  REPLICA="$old"
  # the same numbers on both once caught up (the expiry sweep may change one between the reads: read again)
  local digest="SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT(number, '/', status))), 0) FROM docnum.document_numbers"
  local head on_new on_old same=0
  for _ in $(seq 1 20); do
    head="$(mariadb -uroot -h127.0.0.1 -P"$new" -N -e 'SELECT @@gtid_binlog_pos')"
    on_new="$(mariadb -uroot -h127.0.0.1 -P"$new" -N -e "$digest")"
    [ "$(mariadb -uroot -h127.0.0.1 -P"$old" -N -e "SELECT MASTER_GTID_WAIT('$head', 120)")" = 0 ] \
      || { echo "[$name] the old primary did not catch up with $head"; exit 1; }
    on_old="$(mariadb -uroot -h127.0.0.1 -P"$old" -N -e "$digest")"
    if [ "$on_new" = "$on_old" ]; then same=1; break; fi
    sleep 0.5
  done
  [ "$same" = 1 ] || { echo "[$name] the rejoined server differs: new primary $on_new, rejoined $on_old"; exit 1; }
  echo "[$name] the old primary rejoined as a replica and holds the same numbers (count, digest: $on_old)"
  echo "[$name] primaries followed by the instances: $(for p in "${APP_PORTS[@]}"; do curl -fsS "http://127.0.0.1:$p/metrics" | sed -n 's/^docnum_database_primary_switches_total //p'; done | awk '{ s += $1 } END { print s }')"
}

log "phase 7: failover under load: the primary kill -9'd, the replica promoted, the old primary rejoins"
failover failover "$DB_PORT" "$DB2_PORT"

log "phase 8: a second failover, the other way"
failover failback "$DB2_PORT" "$DB_PORT"

log "cluster harness: all phases passed"
