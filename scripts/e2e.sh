#!/usr/bin/env bash
# Browser tests: starts the built server on a free loopback port with a fresh SQLite file, the demo data,
# and the clock at 2025-06-15 (B.E. 2568); creates a staff user (and, for the admin pages, a second super admin
# and a project admin); runs Playwright with Debian's Chromium.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -z "${SERVER_BIN:-}" ]; then build_site; fi
ensure_chromium
ensure_npm_packages

work="$(mktemp -d)"
port="$(free_port)"
export DATABASE_URL="sqlite://$work/e2e.db"
export ADMIN_USER=admin ADMIN_PASSWORD="e2e-admin-pass" STAFF_USER=staff STAFF_PASSWORD="e2e-staff-pass"
# the webhook page's test points a webhook at a loopback port that never answers: allowed here only
export WEBHOOK_ALLOW_PRIVATE_TARGETS=true
log "starting the server for the browser tests on 127.0.0.1:$port"
(cd "$ROOT" && BOOTSTRAP_ADMIN_PASSWORD="$ADMIN_PASSWORD" CLOCK_START="2025-06-15T03:00:00Z" \
   RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_IP_PER_MIN=0 RUST_LOG="${RUST_LOG:-warn}" \
   exec "$SERVER_BIN" serve --addr "127.0.0.1:$port") > "$work/server.log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; wait $server_pid 2>/dev/null || true' EXIT
wait_for_health "127.0.0.1:$port" 60 || { cat "$work/server.log"; exit 1; }
"$SERVER_BIN" create-user --username "$STAFF_USER" --password "$STAFF_PASSWORD" --role STAFF --display-name "สมชาย ใจดี" >/dev/null
# admin pages: a second super admin (a reset needs two people) and a project admin of LCBP3-C4
export ADMIN2_USER=admin2 ADMIN2_PASSWORD="e2e-admin2-pass" PADMIN_USER=padmin PADMIN_PASSWORD="e2e-padmin-pass"
"$SERVER_BIN" create-user --username "$ADMIN2_USER" --password "$ADMIN2_PASSWORD" --role SUPER_ADMIN --display-name "สมหญิง ผู้อนุมัติ" >/dev/null
"$SERVER_BIN" create-user --username "$PADMIN_USER" --password "$PADMIN_PASSWORD" --role PROJECT_ADMIN --admin-of LCBP3-C4 --display-name "ผู้ดูแลโครงการ C4" >/dev/null

cd "$ROOT/end2end"
status=0
BASE_URL="http://127.0.0.1:$port" npx playwright test "$@" || status=$?
if [ $status -ne 0 ]; then echo "--- server log ---"; tail -n 50 "$work/server.log"; fi
exit $status
