#!/usr/bin/env bash
# Live screens across two instances: two servers on one MariaDB database (a database of this run's
# own, dropped at the end) with the Redis lock (a Redis server of this run's own), and end2end/tests/live.spec.ts:
# a reserve on instance A shows on B's /counters without a reload; B restarted on the same port reconnects and
# updates again; B's reset queue shows a request made on A; B's reservation form marks its preview stale.
# Needs MariaDB on 127.0.0.1:3306 (root, no password) and redis-server: scripts/test.sh calls it under ensure_mariadb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
ensure_mariadb || exit 1
ensure_redis || exit 1
if [ -z "${SERVER_BIN:-}" ]; then build_site; fi
ensure_chromium
ensure_npm_packages

work="$(mktemp -d)"
database="docnum_live_$(date +%s)_$$"
redis_port="$(free_port)"
export DATABASE_URL="mysql://root@127.0.0.1:3306/$database"
export REDIS_URLS="redis://127.0.0.1:$redis_port"
export ADMIN_USER=admin ADMIN_PASSWORD="e2e-live-admin-pass"
export BOOTSTRAP_ADMIN_PASSWORD="$ADMIN_PASSWORD" CLOCK_START="2025-06-15T03:00:00Z" \
  RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_TOKEN_PER_MIN=0 RUST_LOG="${RUST_LOG:-warn}"

cleanup() {
  for f in "$work"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  sleep 0.5
  mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS \`$database\`" || true
}
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --logfile "$work/redis.log" &
echo $! > "$work/redis.pid"
# picked once Redis holds its port (free_port only asks the kernel: two picks before a bind can be the same port)
port_a="$(free_port)"
port_b="$(free_port)"
while [ "$port_b" = "$port_a" ] || [ "$port_b" = "$redis_port" ]; do port_b="$(free_port)"; done
mariadb -uroot -h127.0.0.1 -e "CREATE DATABASE \`$database\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"

# start_instance NAME PORT: the server in the background, its pid in $work/NAME.pid, its log in $work/NAME.log
cat > "$work/start.sh" <<SCRIPT
#!/usr/bin/env bash
set -e
name="\$1" port="\$2"
if [ -f "$work/\$name.pid" ]; then
  kill "\$(cat "$work/\$name.pid")" 2>/dev/null || true
  while kill -0 "\$(cat "$work/\$name.pid")" 2>/dev/null; do sleep 0.1; done
fi
cd "$ROOT"
nohup "$SERVER_BIN" serve --addr "127.0.0.1:\$port" >> "$work/\$name.log" 2>&1 < /dev/null &
echo \$! > "$work/\$name.pid"
for _ in \$(seq 1 300); do
  if curl -fsS "http://127.0.0.1:\$port/health" >/dev/null 2>&1; then exit 0; fi
  sleep 0.2
done
echo "instance \$name did not become healthy" >&2
exit 1
SCRIPT
chmod +x "$work/start.sh"

log "live screens: instance A on $port_a, instance B on $port_b, one MariaDB database ($database), Redis on $redis_port"
"$work/start.sh" a "$port_a" || { cat "$work/a.log"; exit 1; }   # migrates and loads the demo data first
"$work/start.sh" b "$port_b" || { cat "$work/b.log"; exit 1; }
export LIVE_TOKEN="$("$SERVER_BIN" create-token --name e2e-live)"

cd "$ROOT/end2end"
status=0
LIVE_TWO_INSTANCES=1 BASE_URL="http://127.0.0.1:$port_b" BASE_URL_A="http://127.0.0.1:$port_a" \
  RESTART_B="$work/start.sh b $port_b" npx playwright test tests/live.spec.ts "$@" || status=$?
if [ $status -ne 0 ]; then
  echo "--- instance A log ---"; tail -n 40 "$work/a.log"
  echo "--- instance B log ---"; tail -n 40 "$work/b.log"
fi
exit $status
