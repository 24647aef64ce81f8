# Sourced by the scripts: make sure the local MariaDB and Redis the tests use are answering on loopback,
# installing (Debian packages) and starting them when they are not.
#   ensure_mariadb   127.0.0.1:3306, user root without password (`mariadb -uroot -h127.0.0.1`)
#   ensure_redis     127.0.0.1:6379 (`redis-cli -h 127.0.0.1 ping`)
# Each returns 0 when the service answers. When it cannot be made to answer: with CI set, it prints why and
# exits 1 (CI never skips these tests); otherwise it warns and returns 1, and the caller decides.

SERVICES_WAIT_SECS="${SERVICES_WAIT_SECS:-60}"

_services_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Runs a command as root (directly, or through sudo when not root).
_services_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

# Installs Debian packages ($@) when their binaries are missing.
_services_apt_install() {
  _services_log "installing $* (apt-get)"
  _services_as_root apt-get update -qq &&
    _services_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# The service could not be made to answer: fail the run under CI, else warn and let the caller go on.
_services_unavailable() {
  local what="$1" why="$2"
  if [ -n "${CI:-}" ]; then
    echo "ERROR: $what is not available: $why" >&2
    echo "CI is set, so the tests that need $what are not skipped: failing." >&2
    exit 1
  fi
  echo "WARNING: $what is not available: $why — the tests that need it are skipped (set CI=1 to make this an error)" >&2
  return 1
}

# Waits until "$@" succeeds, for up to SERVICES_WAIT_SECS seconds.
_services_wait_for() {
  local deadline=$((SECONDS + SERVICES_WAIT_SECS))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  "$@" >/dev/null 2>&1
}

_mariadb_answers() { mariadb -uroot -h127.0.0.1 -e 'select 1'; }
# Through the Unix socket as the OS root: how a fresh Debian install lets root in (unix_socket auth).
_mariadb_socket_answers() { _services_as_root mariadb -uroot -e 'select 1'; }
_mariadb_either_answers() { _mariadb_answers >/dev/null 2>&1 || _mariadb_socket_answers >/dev/null 2>&1; }

ensure_mariadb() {
  if command -v mariadb >/dev/null && _mariadb_answers >/dev/null 2>&1; then return 0; fi
  local installed_now=""
  if ! [ -x /usr/sbin/mariadbd ] || ! command -v mariadb >/dev/null; then
    _services_apt_install mariadb-server mariadb-client ||
      { _services_unavailable "MariaDB" "apt-get install mariadb-server failed"; return 1; }
    installed_now=1
  fi
  if ! [ -x /usr/sbin/mariadbd ]; then
    _services_unavailable "MariaDB" "/usr/sbin/mariadbd is missing after installing mariadb-server"; return 1
  fi
  if ! _mariadb_socket_answers >/dev/null 2>&1; then
    _services_log "starting MariaDB (/usr/sbin/mariadbd)"
    # the socket and pid directory; a fresh container may not have it
    _services_as_root install -d -o mysql -g mysql /run/mysqld 2>/dev/null || true
    _services_as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql ||
      { _services_unavailable "MariaDB" "start-stop-daemon could not start /usr/sbin/mariadbd"; return 1; }
    _services_wait_for _mariadb_either_answers || true
  fi
  # A MariaDB we have just installed lets root in through the socket only; the tests connect over TCP as
  # root without a password (loopback only: Debian binds 127.0.0.1). Never changed on an existing install.
  if [ -n "$installed_now" ] && ! _mariadb_answers >/dev/null 2>&1 && _mariadb_socket_answers >/dev/null 2>&1; then
    _services_log "allowing root over TCP from 127.0.0.1 without a password (fresh install, for the tests)"
    _services_as_root mariadb -uroot -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
      GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
      ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');" || true
  fi
  if ! _services_wait_for _mariadb_answers; then
    _services_unavailable "MariaDB" "127.0.0.1:3306 does not answer \`mariadb -uroot -h127.0.0.1 -e 'select 1'\` within ${SERVICES_WAIT_SECS}s"
    return 1
  fi
  _services_log "MariaDB answers on 127.0.0.1:3306"
}

_redis_answers() { [ "$(redis-cli -h 127.0.0.1 ping 2>/dev/null)" = "PONG" ]; }

ensure_redis() {
  if command -v redis-cli >/dev/null && _redis_answers; then return 0; fi
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    _services_apt_install redis-server ||
      { _services_unavailable "Redis" "apt-get install redis-server failed"; return 1; }
  fi
  if ! command -v redis-server >/dev/null; then
    _services_unavailable "Redis" "redis-server is missing after installing it"; return 1
  fi
  _services_log "starting Redis (redis-server on 127.0.0.1:6379)"
  _services_as_root install -d /var/lib/redis /var/log/redis 2>/dev/null || true
  _services_as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log ||
    { _services_unavailable "Redis" "redis-server did not start (see /var/log/redis/ci.log)"; return 1; }
  if ! _services_wait_for _redis_answers; then
    _services_unavailable "Redis" "127.0.0.1:6379 does not answer \`redis-cli -h 127.0.0.1 ping\` within ${SERVICES_WAIT_SECS}s"
    return 1
  fi
  _services_log "Redis answers on 127.0.0.1:6379"
}
