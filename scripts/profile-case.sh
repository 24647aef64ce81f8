#!/usr/bin/env bash
# One load case, measured from inside: after a warm-up, the rate together with where the CPU went (per server thread
# name: user+system µs and context switches per number), the load generator's and MariaDB's CPU, the machine's idle
# and iowait, the server's writes, the commit groups' phases from /metrics and, on MariaDB, its statement counters
# (prepared, executed, rows read by index or by scan) per number. What bench.sh gives as one row, this explains
# (docs/benchmarks/method.md).
#   scripts/profile-case.sh                              # SQLite, 1,000 counters, 64 callers, 20,000 numbers
#   DB=mysql REDIS=redis://127.0.0.1:6379 scripts/profile-case.sh
#   BIN=/other/release N=9000 K=1 C=64 ENVS="COMMITTERS=3" scripts/profile-case.sh
# BIN: a directory with docnum and loadgen (default: this checkout's release build, not rebuilt here).
# ENVS: VAR=value words for the server; URL_PARAMS: sqlx options on the MariaDB URL; SQLITE_PAGE_SIZE: the SQLite
# file made with that page size; PERF=1: the server's hottest symbols by thread (perf, flat); SYSCALLS=1: its reads,
# writes and syncs per number by file (strace; the run is slowed, its rate meaningless); STATEMENTS=1: each kind of
# statement's count and mean time during the measured run, from sqlx's statement log (which slows the run itself).
# Keep WARM + N under 9,999 on one counter (K=1): the demo template runs out there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
BIN="${BIN:-$CARGO_TARGET_DIR/release}"
DB="${DB:-sqlite}" N="${N:-20000}" C="${C:-64}" K="${K:-1000}" WARM="${WARM:-2000}" REDIS="${REDIS:-}"
W="$(mktemp -d /tmp/docnum-profile.XXXXXX)"
port="$(free_port)"
if [ "$DB" = sqlite ]; then
  url="sqlite://$W/case.db"
  # SQLITE_PAGE_SIZE: the file made beforehand with that page size (kept once WAL is on)
  if [ -n "${SQLITE_PAGE_SIZE:-}" ]; then
    python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute(f"PRAGMA page_size = {int(sys.argv[2])}"); c.execute("PRAGMA journal_mode = WAL")
c.execute("CREATE TABLE page_size_probe (x)"); c.execute("DROP TABLE page_size_probe"); c.close()' "$W/case.db" "$SQLITE_PAGE_SIZE"
  fi
else
  ensure_mariadb
  name="docnum_profile_$port"
  mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name CHARACTER SET utf8mb4"
  url="mysql://root@127.0.0.1:3306/$name${URL_PARAMS:+?$URL_PARAMS}"   # URL_PARAMS: sqlx options, e.g. statement-cache-capacity=400
fi
# ENVS: extra VAR=value words for the server (an experiment's switch)
# shellcheck disable=SC2086
env DATABASE_URL="$url" REDIS_URLS="$REDIS" BOOTSTRAP_ADMIN_PASSWORD=profile-admin-pass RATE_LIMIT_TOKEN_PER_MIN=0 \
  RUST_LOG="error${STATEMENTS:+,sqlx::query=debug}" ${ENVS:-} "$BIN/docnum" serve --addr "127.0.0.1:$port" > "$W/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  if [ "$DB" = mysql ]; then mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $name" || true; fi
}
trap cleanup EXIT
wait_for_health "127.0.0.1:$port" 60
token="$(DATABASE_URL="$url" "$BIN/docnum" create-token --name profile)"
load() { "$BIN/loadgen" --url "http://127.0.0.1:$port" --token "$token" -c "$C" --counters "$K" "$@" --json | tail -n1; }
load -n "$WARM" > /dev/null

# snapshot FILE: per-thread CPU ticks and context switches of the server, the machine's CPU, MariaDB's CPU, metrics
snapshot() {
  python3 - "$server" "$1" <<'PY'
import glob, json, os, subprocess, sys
pid, out = sys.argv[1], sys.argv[2]
threads = {}
for task in glob.glob(f"/proc/{pid}/task/*"):
    try:
        stat = open(f"{task}/stat").read()
        status = open(f"{task}/status").read()
    except OSError:
        continue
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    switches = sum(int(l.split()[1]) for l in status.splitlines() if "ctxt_switches:" in l)
    t = threads.setdefault(name, [0, 0, 0])
    t[0] += int(fields[11]); t[1] += int(fields[12]); t[2] += switches
machine = [int(x) for x in open("/proc/stat").readline().split()[1:]]
mariadb = 0
for p in subprocess.run(["pgrep", "-x", "mariadbd"], capture_output=True, text=True).stdout.split():
    f = open(f"/proc/{p}/stat").read(); f = f[f.rindex(")") + 2:].split(); mariadb += int(f[11]) + int(f[12])
io = dict(l.split(": ") for l in open(f"/proc/{pid}/io").read().splitlines())
json.dump({"threads": threads, "machine": machine, "mariadb": mariadb, "io": {k: int(v) for k, v in io.items()}}, open(out, "w"))
PY
  curl -s "http://127.0.0.1:$port/metrics" > "$1.metrics"
  if [ "$DB" = mysql ]; then
    mariadb -uroot -h127.0.0.1 -N -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_stmt_prepare','Com_stmt_execute','Com_stmt_close','Questions','Com_select','Com_insert','Com_update','Com_commit','Com_insert_select','Com_update_multi','Innodb_rows_inserted','Innodb_rows_updated','Innodb_rows_read','Handler_read_key','Handler_read_next','Handler_read_rnd_next')" > "$1.stmts"
  fi
}

snapshot "$W/before"
logged="$(wc -l < "$W/server.log")"
# PERF=1: perf samples of the server during the measured load (flat: a release build has no frame pointers)
if [ -n "${PERF:-}" ]; then perf record -q -F 1999 -p "$server" -o "$W/perf.data" 2> /dev/null & perf_pid=$!; fi
# SYSCALLS=1: the server's reads, writes and syncs by file during the measured load (strace: slows the run a lot, so
# its rate and CPU figures say nothing then; what it is for is where the calls go, per number)
if [ -n "${SYSCALLS:-}" ]; then
  strace -f -qq -e trace=openat,pread64,pwrite64,read,write,writev,fsync,fdatasync -p "$server" -o "$W/strace.txt" & strace_pid=$!
  sleep 0.5
  # a second into the load the HTTP connections are open; after it they are gone
  # the server's open files as "<fd> <target>" lines
  open_files() { for fd in /proc/"$server"/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done; }
  (sleep 1; open_files > "$W/fds.txt") &
fi
/usr/bin/time -f '%U %S' -o "$W/loadgen.time" "$BIN/loadgen" --url "http://127.0.0.1:$port" --token "$token" -c "$C" --counters "$K" \
  -n "$N" --json | tail -n1 > "$W/result.json"
snapshot "$W/after"
if [ -n "${SYSCALLS:-}" ]; then
  open_files >> "$W/fds.txt"
  kill -INT "$strace_pid"; wait "$strace_pid" 2> /dev/null || true
  python3 - "$W" <<'PY'
import collections, json, re, sys
w = sys.argv[1]
n = json.load(open(f"{w}/result.json"))["ok"] or 1
names = {}
for line in open(f"{w}/fds.txt"):
    if " " in line:
        fd, path = line.rstrip("\n").split(" ", 1)
        names.setdefault(fd, path)
def kind(path):
    path = re.sub(r"/tmp/docnum-profile\.\w+/", "", path)
    path = re.sub(r"^socket:\[\d+\]$", "sockets (HTTP, Redis, MariaDB)", path)
    return re.sub(r"etilqs_\w+", "etilqs_* (SQLite temp file)", re.sub(r":\[\d+\]", "", path))
opened, calls = {}, collections.Counter()
for line in open(f"{w}/strace.txt"):
    m = re.match(r"\d+\s+(\w+)\((\d+|AT_FDCWD)(?:, \"([^\"]*)\")?", line)
    if not m:
        continue
    call, fd, path = m.groups()
    if call == "openat":
        r = re.search(r"= (\d+)$", line.strip())
        if r and path:
            opened[r.group(1)] = path
        continue
    calls[(call, kind(opened.get(fd) or names.get(fd, f"fd {fd}")))] += 1
print(f"system calls per number, by file (strace; {n} numbers):")
for (call, target), c in calls.most_common(15):
    print(f"  {call:<10} {c / n:>6.2f}  {target}")
PY
fi
if [ -n "${PERF:-}" ]; then
  kill -INT "$perf_pid"; wait "$perf_pid" 2> /dev/null || true
  perf report -i "$W/perf.data" --sort comm,sym --stdio 2> /dev/null | grep -v '^#' | grep . | head -n "${PERF_LINES:-40}"
fi

python3 - "$W" "$DB" <<'PY'
import json, os, re, sys
w, db = sys.argv[1], sys.argv[2]
r = json.load(open(f"{w}/result.json"))
b, a = json.load(open(f"{w}/before")), json.load(open(f"{w}/after"))
hz = os.sysconf("SC_CLK_TCK"); n = r["ok"] or 1
us = lambda ticks: ticks * 1e6 / hz / n
print(f"rate {r['numbersPerSecond']:,.0f}/s  ok {r['ok']}  failed {r['failed']}  duplicates {r['duplicates']}  "
      f"p50 {r['p50Ms']:.2f}  p99 {r['p99Ms']:.2f} ms")
print(f"{'server thread':<18} {'user us/n':>9} {'sys us/n':>9} {'switch/n':>9}")
total = [0, 0, 0]
for name in sorted(a["threads"]):
    d = [x - y for x, y in zip(a["threads"][name], b["threads"].get(name, [0, 0, 0]))]
    total = [x + y for x, y in zip(total, d)]
    if any(d):
        print(f"{name:<18} {us(d[0]):>9.1f} {us(d[1]):>9.1f} {d[2] / n:>9.2f}")
print(f"{'all':<18} {us(total[0]):>9.1f} {us(total[1]):>9.1f} {total[2] / n:>9.2f}")
u, s = open(f"{w}/loadgen.time").read().split()
print(f"loadgen cpu {(float(u) + float(s)) * 1e6 / n:.1f} us/n")
if db == "mysql":
    print(f"mariadbd cpu {us(a['mariadb'] - b['mariadb']):.1f} us/n")
io = {k: a["io"][k] - b["io"][k] for k in a["io"]}
print(f"server writes: {io['wchar'] / n / 1024:.1f} KiB/n in {io['syscw'] / n:.2f} calls/n; to disk {io['write_bytes'] / n / 1024:.1f} KiB/n")
m = [x - y for x, y in zip(a["machine"], b["machine"])]
print(f"machine: idle {100 * m[3] / sum(m):.0f} %  iowait {100 * m[4] / sum(m):.0f} %")
def series(path):
    out = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        out[name] = float(value)
    return out
mb, ma = series(f"{w}/before.metrics"), series(f"{w}/after.metrics")
delta = lambda k: ma.get(k, 0) - mb.get(k, 0)
for k in sorted(ma):
    if k.startswith("docnum_commit_group_phase_seconds_sum"):
        c = delta(k.replace("_sum", "_count"))
        phase = re.search(r'phase="(\w+)"', k).group(1)
        if c:
            print(f"phase {phase:<7} {1000 * delta(k) / c:.3f} ms over {c:.0f} groups")
for base in ("docnum_commit_group_batches", "docnum_batch_size"):
    c = sum(delta(k) for k in ma if k.startswith(base + "_count"))
    s = sum(delta(k) for k in ma if k.startswith(base + "_sum"))
    if c:
        print(f"{base}: mean {s / c:.1f} over {c:.0f}")
if db == "mysql":
    rd = lambda p: dict(l.split() for l in open(p))
    sb, sa = rd(f"{w}/before.stmts"), rd(f"{w}/after.stmts")
    print("server status per number: " + "  ".join(f"{k.removeprefix('Com_')} {(int(sa[k]) - int(sb[k])) / n:.2f}" for k in sorted(sa)))
PY
if [ -n "${STATEMENTS:-}" ]; then
  # sqlx logs each statement with its time (on SQLite measured in its worker thread, on MariaDB from send to answer)
  tail -n +"$((logged + 1))" "$W/server.log" | python3 -c '
import collections, re, sys
kinds = collections.defaultdict(lambda: [0, 0.0, 0])
for line in sys.stdin:
    m = re.search(r"summary=\"([^\"]*)\".*rows_affected=(\d+).*elapsed_secs=([0-9.e-]+)", re.sub(r"\x1b\[[0-9;]*m", "", line))
    if m:
        k = kinds["json_group_array (group read)" if "json_group_array" in m.group(1) else " ".join(m.group(1).split()[:3])]
        k[0] += 1; k[1] += float(m.group(3)); k[2] += int(m.group(2))
print("%-40s %7s %8s %8s %9s" % ("statement", "count", "mean ms", "total s", "rows each"))
for name, (n, t, rows) in sorted(kinds.items(), key=lambda kv: -kv[1][1])[:15]:
    print(f"{name[:40]:<40} {n:>7} {1e3 * t / n:>8.3f} {t:>8.2f} {rows / n:>9.1f}")'
fi
echo "server log and raw files: $W" >&2
