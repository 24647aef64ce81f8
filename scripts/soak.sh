#!/usr/bin/env bash
# Soak run, loopback only: a release build, its own MariaDB on its own
# port, one Redis, three instances forwarding a counter's batches to its lock's holder (as scripts/cluster.sh),
# and loadgen's open model at a fixed arrival rate of the requirements' mix (reserves of RFA / TRANSMITTAL / other
# types, confirms, cancels, previews, page loads with a session, page loads abandoned mid-answer) for
# SOAK_MINUTES. Every minute it samples each instance's RSS, open fds, MariaDB connections and requests in
# flight into a CSV. At the end: `docnum check --received` on every number loadgen received, the per-minute
# latency table, each instance at the end of the warm-up and at the end, and the verdicts:
#   - RSS growth of each instance after the warm-up ≤ SOAK_MAX_RSS_GROWTH_PCT (10)
#   - p99 of every minute ≤ 2 × the first minute's
#   - errors ≤ SOAK_MAX_ERROR_PCT (0.1) % of the requests sent
#   - every number received on record, none twice, every gap explained (`docnum check`)
#   - each instance stops within 30 s of SIGTERM (a wedged worker never lets it)
# Exits non-zero when any fails.
#
#   scripts/soak.sh                                  # 30 minutes at 500 arrivals/s
#   SOAK_MINUTES=3 SOAK_RATE=200 scripts/soak.sh     # a short check of the harness
#   SERVER_BIN=…/release/docnum LOADGEN_BIN=…/release/loadgen scripts/soak.sh   # binaries already built
# At 500/s each RFA counter (120 of them, {SEQ:4}) gets about 1.3 numbers/s: runs past ~2 hours fill them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MINUTES="${SOAK_MINUTES:-30}"
RATE="${SOAK_RATE:-500}"
WARMUP="${SOAK_WARMUP_MINUTES:-2}"
MAX_RSS_GROWTH_PCT="${SOAK_MAX_RSS_GROWTH_PCT:-10}"
MAX_ERROR_PCT="${SOAK_MAX_ERROR_PCT:-0.1}"
if [ "$MINUTES" -le "$WARMUP" ]; then
  echo "SOAK_MINUTES ($MINUTES) must be longer than the warm-up (SOAK_WARMUP_MINUTES=$WARMUP)" >&2; exit 2
fi
if [ -z "${SERVER_BIN:-}" ]; then build_site --release; fi
LOADGEN_BIN="${LOADGEN_BIN:-$(dirname "$SERVER_BIN")/loadgen}"

W="$(mktemp -d /tmp/docnum-soak.XXXXXX)"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W/mysql"   # the database is the run's alone; the logs and samples stay
}
trap cleanup EXIT
# whether PID still runs (a child that ended stays a zombie until waited for: that counts as ended)
running() { local state; state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"; [ -n "$state" ] && [ "$state" != Z ]; }
# a process waited for is not killed by the cleanup (its PID may be someone else's by then)
forget() { local keep=() p; for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; PIDS=("${keep[@]}"); }

# --- MariaDB of our own (as scripts/cluster.sh, but with its grant tables: with --skip-grant-tables the
# processlist is empty and names every client `localhost`; --skip-name-resolve keeps each client's host:port) -------
DB_PORT="$(free_port)"
log "soak: own MariaDB on 127.0.0.1:$DB_PORT ($W)"
# a tmpdir of its own: a starting mariadbd deletes every `#sql*` file in its tmpdir, another server's temporary tables too
mkdir -p "$W/tmp"
mariadb-install-db --no-defaults --datadir="$W/mysql" --tmpdir="$W/tmp" --user=root --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
/usr/sbin/mariadbd --no-defaults --user=root --datadir="$W/mysql" --tmpdir="$W/tmp" --port="$DB_PORT" --bind-address=127.0.0.1 \
  --socket="$W/mysql.sock" --pid-file="$W/mysql.pid" --log-error="$W/mysql.err" --skip-name-resolve \
  --innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=256M --max-connections=500 &
MARIADB_PID=$!; PIDS+=("$MARIADB_PID")
db() { mariadb -uroot -h127.0.0.1 -P"$DB_PORT" "$@"; }
for _ in $(seq 1 120); do db -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
db -e 'select 1' >/dev/null || { echo "own MariaDB did not start"; cat "$W/mysql.err"; exit 1; }
db -e 'CREATE DATABASE docnum CHARACTER SET utf8mb4'
export DATABASE_URL="mysql://root@127.0.0.1:$DB_PORT/docnum"

# --- Redis of our own, and three instances forwarding to the lock's holder ----------------------------------
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --logfile "$W/redis.log" &
PIDS+=($!)
sleep 0.5
export REDIS_URLS="redis://127.0.0.1:$REDIS_PORT"
export CLUSTER_SECRET="soak-secret-$RANDOM$RANDOM$RANDOM"
ADMIN_PASSWORD="soak-admin-pass-$RANDOM"
APP_PORTS=("$(free_port)" "$(free_port)" "$(free_port)")
APP_PIDS=()
for port in "${APP_PORTS[@]}"; do
  # one after the other: the first one loads the demo data into the empty database. In the environment a service
  # manager gives it: no RUST_BACKTRACE from the shell that runs this (each caught panic would print a symbolized
  # backtrace; production does not)
  (cd "$ROOT" && unset RUST_BACKTRACE && BOOTSTRAP_ADMIN_PASSWORD="$ADMIN_PASSWORD" RATE_LIMIT_TOKEN_PER_MIN=0 RUST_LOG="${RUST_LOG:-warn}" \
     exec "$SERVER_BIN" serve --addr "127.0.0.1:$port") >> "$W/app-$port.log" 2>&1 &
  APP_PIDS+=($!); PIDS+=($!)
  wait_for_health "127.0.0.1:$port" 60
done
URLS="$(printf 'http://127.0.0.1:%s,' "${APP_PORTS[@]}")"; URLS="${URLS%,}"
TOKEN="$("$SERVER_BIN" create-token --name soak-loadgen)"
log "soak: 3 instances (${APP_PORTS[*]}, pids ${APP_PIDS[*]}), Redis $REDIS_PORT; $RATE arrivals/s for $MINUTES min"

# --- one sample a minute: per instance RSS, fds, MariaDB connections, requests in flight ----------------------
# MariaDB names each connection's client as host:port (information_schema.processlist.host); the instance that
# owns that port is found from its own sockets: the inodes behind /proc/PID/fd, looked up in /proc/PID/net/tcp
# (local port, remote port). `db_sockets` is the instance's own count of sockets to MariaDB, as a cross-check.
SAMPLES="$W/samples.csv"
echo "minute,elapsed_s,instance,pid,rss_kb,fds,db_conns,db_sockets,in_flight,oldest_request_s,runtime_tasks" > "$SAMPLES"
cat > "$W/sample.py" <<'PY'
import os, re, sys, urllib.request
minute, elapsed, db_port, mariadb_pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
instances = [a.split("=") for a in sys.argv[5:]]          # port=pid
hosts = [h.strip() for h in sys.stdin if h.strip()]        # processlist hosts, "127.0.0.1:54321"
host_ports = [int(h.rsplit(":", 1)[1]) for h in hosts if re.match(r".*:\d+$", h)]

def rss_kb(pid):
    try:
        return next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return ""

def fds(pid):
    try:
        return os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []

def db_local_ports(pid):
    inodes = set()
    for fd in fds(pid):
        try:
            m = re.match(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            rows = open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            local, remote, state, inode = f[1], f[2], f[3], f[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == db_port and state == "01":   # ESTABLISHED
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports

def metrics(port):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3).read().decode()
    except Exception:
        return "", "", ""
    in_flight = next((l.split()[-1] for l in text.splitlines() if l.startswith("docnum_requests_in_flight ")), "")
    ages = [float(l.split()[-1]) for l in text.splitlines() if l.startswith("docnum_oldest_request_age_seconds")]
    tasks = next((l.split()[-1] for l in text.splitlines() if l.startswith("docnum_runtime_alive_tasks ")), "")
    return in_flight, (f"{max(ages):.1f}" if ages else ""), tasks

for port, pid in instances:
    ports = db_local_ports(pid)
    in_flight, oldest, tasks = metrics(port)
    print(f"{minute},{elapsed},{port},{pid},{rss_kb(pid)},{len(fds(pid))},{sum(1 for p in host_ports if p in ports)},{len(ports)},{in_flight},{oldest},{tasks}")
print(f"{minute},{elapsed},mariadb,{mariadb_pid},{rss_kb(mariadb_pid)},{len(fds(mariadb_pid))},{len(hosts)},,,,")
PY
sample() {
  local instances=() i
  for i in "${!APP_PORTS[@]}"; do instances+=("${APP_PORTS[$i]}=${APP_PIDS[$i]}"); done
  { db -N -e 'SELECT host FROM information_schema.processlist' 2>/dev/null || true; } |
    python3 "$W/sample.py" "$1" "$((SECONDS - LOAD_STARTED))" "$DB_PORT" "$MARIADB_PID" "${instances[@]}" >> "$SAMPLES"
}

# --- the load -------------------------------------------------------------------------------------------------
RECEIVED="$W/received.tsv"
LOAD_STARTED=$SECONDS
"$LOADGEN_BIN" --url "$URLS" --token "$TOKEN" --login "admin:$ADMIN_PASSWORD" --rate "$RATE" --duration "$((MINUTES * 60))" \
  --confirm-ratio 0.5 --cancel-ratio 0.1 --allow-errors --record "$RECEIVED" --report "$W/report.json" \
  > >(tee "$W/loadgen.out") 2>&1 &
LOADGEN_PID=$!; PIDS+=("$LOADGEN_PID")
for minute in $(seq 0 $((MINUTES - 1))); do
  sample "$minute"
  while [ $((SECONDS - LOAD_STARTED)) -lt $(((minute + 1) * 60)) ] && running "$LOADGEN_PID"; do sleep 1; done
done
LOADGEN_STATUS=0; wait "$LOADGEN_PID" || LOADGEN_STATUS=$?
forget "$LOADGEN_PID"
sample "$MINUTES"
sleep 0.2   # tee's last lines

# --- every number accounted for ---------------------------------------------------------------------------------
CHECK_STATUS=0
"$SERVER_BIN" check --received "$RECEIVED" > "$W/check.json" || CHECK_STATUS=$?

# --- each instance stops on SIGTERM (SHUTDOWN_GRACE_SECS is 20 s by default; a wedged worker never ends) ---------
STOPS="$W/stops.txt"; : > "$STOPS"
TERM_SENT=$SECONDS
for pid in "${APP_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for i in "${!APP_PORTS[@]}"; do
  pid="${APP_PIDS[$i]}"
  while running "$pid" && [ $((SECONDS - TERM_SENT)) -lt 30 ]; do sleep 0.1; done
  if ! running "$pid"; then status=0; wait "$pid" || status=$?; echo "${APP_PORTS[$i]} yes $((SECONDS - TERM_SENT)) $status" >> "$STOPS"
  else kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; echo "${APP_PORTS[$i]} no $((SECONDS - TERM_SENT)) -" >> "$STOPS"; fi
  forget "$pid"
done

# --- the report and the verdicts ----------------------------------------------------------------------------------
set +e
python3 - "$W" "$WARMUP" "$MINUTES" "$MAX_RSS_GROWTH_PCT" "$MAX_ERROR_PCT" "$CHECK_STATUS" "$LOADGEN_STATUS" <<'PY'
import csv, json, sys
w, warmup, minutes, max_growth, max_error_pct, check_status, loadgen_status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
report = json.load(open(f"{w}/report.json"))
rows = report["intervals"]
print("\n## Soak: per-minute latency (ms, from each request's due time)\n")
print("| minute | sent | ok | errors | p50 | p95 | p99 | max |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    print(f"| {r['interval']} | {r['sent']} | {r['ok']} | {r['errors']} | {r['p50Ms']:.2f} | {r['p95Ms']:.2f} | {r['p99Ms']:.2f} | {r['maxMs']:.1f} |")

samples = list(csv.DictReader(open(f"{w}/samples.csv")))
def at(minute):
    return {s["instance"]: s for s in samples if int(s["minute"]) == minute}
start, end = at(warmup), at(minutes)
print(f"\n## Soak: each instance after the {warmup}-minute warm-up and at the end (minute {minutes})\n")
print("| instance | RSS MB start → end | growth | fds start → end | DB connections start → end | runtime tasks start → end | in flight at end |")
print("| --- | --- | --- | --- | --- | --- | --- |")
growths = {}
for name in sorted(start):
    s, e = start[name], end.get(name, {})
    def mb(v): return f"{int(v) / 1024:.1f}" if v else "?"
    growth = ""
    if s.get("rss_kb") and e.get("rss_kb"):
        g = (int(e["rss_kb"]) - int(s["rss_kb"])) * 100.0 / int(s["rss_kb"])
        growth = f"{g:+.1f} %"
        if name != "mariadb":
            growths[name] = g
    print(f"| {name} (pid {s['pid']}) | {mb(s.get('rss_kb'))} → {mb(e.get('rss_kb'))} | {growth} | {s.get('fds')} → {e.get('fds', '?')} | "
          f"{s.get('db_conns')} → {e.get('db_conns', '?')} | {s.get('runtime_tasks') or '-'} → {e.get('runtime_tasks') or '-'} | {e.get('in_flight') or '-'} |")
print(f"\n(every minute's sample: {w}/samples.csv; mariadb's DB connections are every connection it has)")

check = json.load(open(f"{w}/check.json"))
print(f"\ndocnum check: numbers {check['numbers']} (confirmed {check['confirmed']}, cancelled {check['cancelled']}, reserved {check['reserved']}) "
      f"in {check['counters']} counters; duplicates {check['duplicates']}, unexplained gaps {check['unexplainedGaps']}, "
      f"received {check['receivedChecked']} / missing {check['receivedMissing']}, audit rows {check['auditRows']} intact {check['auditOk']}")
stops = [l.split() for l in open(f"{w}/stops.txt")]

verdicts = []
worst = max(growths.values()) if growths else float("inf")
verdicts.append((bool(growths) and worst <= max_growth, f"RSS growth after the warm-up ≤ {max_growth:g} %: worst {worst:+.1f} %"))
first = rows[0]["p99Ms"]
over = [r["interval"] for r in rows if r["p99Ms"] > 2 * first]
verdicts.append((not over, f"p99 of every minute ≤ 2 × the first minute's ({first:.2f} ms → limit {2 * first:.2f} ms)" + (f": minutes {over} over" if over else "")))
pct = report["failed"] * 100.0 / max(report["sent"], 1)
kinds = ", ".join(f"{k} {v}" for k, v in report["errorsByKind"].items())
verdicts.append((pct <= max_error_pct, f"errors ≤ {max_error_pct:g} % of requests: {report['failed']} of {report['sent']} ({pct:.3f} %)" + (f" — {kinds}" if kinds else "")))
verdicts.append((check_status == 0 and check["ok"] and loadgen_status == 0 and report["duplicates"] == 0,
                 f"every number accounted for (docnum check exit {check_status}, loadgen exit {loadgen_status}, {report['numbersReceived']} received)"))
verdicts.append((all(s[1] == "yes" for s in stops), "each instance stops within 30 s of SIGTERM: " + ", ".join(
    f"{s[0]} {'stopped after ' + s[2] + ' s, exit ' + s[3] if s[1] == 'yes' else 'NOT STOPPED in 30 s (killed)'}" for s in stops)))
# not a verdict: a panic in a request's task is caught by the runtime (that request alone fails), but worth a look
import glob, collections, re
panics = collections.Counter()
for log in glob.glob(f"{w}/app-*.log"):
    lines = open(log, errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"panicked at (\S+?):\d+:\d+:", line)
        if m:
            panics[f"{lines[i + 1] if i + 1 < len(lines) else ''} ({m.group(1)})"] += 1
print(f"\nserver panics logged (all instances): {sum(panics.values())}")
for text, n in panics.most_common():
    print(f"  {n} × {text}")
print("\n## Verdicts\n")
for ok, text in verdicts:
    print(f"- {'PASS' if ok else 'FAIL'}: {text}")
sys.exit(0 if all(ok for ok, _ in verdicts) else 1)
PY
VERDICT=$?
echo "soak: work directory $W (loadgen.out, report.json, samples.csv, check.json, app-*.log)"
exit "$VERDICT"
