#!/usr/bin/env bash
# The register of a counter of 100,000 numbers (docs/benchmarks/register.md), on a built server: one `docnum serve`
# on a fresh SQLite file (or MariaDB, BENCH_DB=mysql), LCBP3's LETTER template widened to {SEQ:6}, 200 blocks of 500
# reserved over REST, then `GET …/register?format=csv` and `format=xlsx` timed from the request to the last byte.
#   BENCH_BIN_DIR=$CARGO_TARGET_DIR/release scripts/bench-register.sh          # the release build (what is reported)
#   BENCH_DB=mysql BENCH_BIN_DIR=… scripts/bench-register.sh                  # on MariaDB at 127.0.0.1:3306
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"
BIN="${BENCH_BIN_DIR:-$CARGO_TARGET_DIR/release}"
[ -x "$BIN/docnum" ] || { echo "no docnum in $BIN (cargo build --release --features ssr --bins)" >&2; exit 1; }
W="$(mktemp -d /tmp/docnum-bench-register.XXXXXX)"
PORT="$(free_port)"
if [ "${BENCH_DB:-sqlite}" = mysql ]; then
  ensure_mariadb
  DB="docnum_bench_register_$PORT"
  mariadb -uroot -h127.0.0.1 -e "CREATE DATABASE $DB CHARACTER SET utf8mb4"
  URL="mysql://root@127.0.0.1:3306/$DB"
else
  URL="sqlite://$W/register.db"
fi
SERVER_PID=""
cleanup() {
  [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
  [ -z "${DB:-}" ] || mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS $DB"
  rm -rf "$W"
}
trap cleanup EXIT
DATABASE_URL="$URL" BOOTSTRAP_ADMIN_PASSWORD=bench-admin-pass RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_GLOBAL_PER_MIN=0 RUST_LOG=error \
  "$BIN/docnum" serve --addr "127.0.0.1:$PORT" > "$W/server.log" 2>&1 &
SERVER_PID=$!
wait_for_health "127.0.0.1:$PORT" 60
python3 - "http://127.0.0.1:$PORT" "$(git rev-parse --short HEAD)" "${BENCH_DB:-sqlite}" <<'PY'
import http.cookiejar, json, sys, time, urllib.request
base, commit, db = sys.argv[1:4]
jar = http.cookiejar.CookieJar()
web = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "origin": base})
    with web.open(req) as r:
        return json.loads(r.read() or b"null")
call("POST", "/api/v1/auth/login", {"username": "admin", "password": "bench-admin-pass"})
project = next(p["id"] for p in call("GET", "/api/v1/reference/projects") if p["code"] == "LCBP3")
letter = next(t["id"] for t in call("GET", "/api/v1/reference/correspondence-types") if t["code"] == "LETTER")
call("POST", "/api/v1/document-numbering/configs", {"projectId": project, "correspondenceTypeId": letter,
     "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:6}-{YEAR:B.E.}", "resetScope": "YEARLY",
     "reason": "room for 100,000", "acknowledgeKeyChange": True})
block = {"projectCode": "LCBP3", "correspondenceTypeCode": "LETTER", "originatorCode": "คคง.", "recipientCode": "สคฉ.3",
         "count": 500}
started = time.monotonic()
for _ in range(200):
    assert len(call("POST", "/api/v1/document-numbering/reserve-block", block)["numbers"]) == 500
made = time.monotonic() - started
print(f"| database | CSV | XLSX | 100,000 numbers in 200 blocks |")
print(f"| --- | --- | --- | --- |")
row = []
for fmt in ("csv", "xlsx"):
    started = time.monotonic()
    with web.open(base + f"/api/v1/document-numbering/register?projectCode=LCBP3&correspondenceTypeCode=LETTER&format={fmt}") as r:
        first = r.read(1)
        first_byte = time.monotonic() - started
        body = first + r.read()
    whole = time.monotonic() - started
    if fmt == "csv":
        assert body.count(b"\n") == 100_001, body.count(b"\n")
    row.append(f"{whole:.2f} s ({len(body) / 1e6:.2f} MB, first byte {first_byte:.2f} s)")
print(f"| {db} (`{commit}`) | {row[0]} | {row[1]} | {made:.1f} s |")
PY
