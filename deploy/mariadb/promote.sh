#!/usr/bin/env bash
# Promotes a replica to primary after the primary is lost (docs/operations/README.md#failover; deploy/README.md, "Database failover").
#   deploy/mariadb/promote.sh HOST PORT [mariadb client options…]
# 1. stops receiving from the old primary, 2. applies every transaction already received (under AFTER_SYNC
# semi-sync these include every commit a caller was answered for), 3. forgets the old primary, 4. turns on the
# master side of semi-sync and read_only off. The service instances find the writable server by themselves
# (DATABASE_SERVERS). Make sure the old primary is really down (or read-only) first: two writable servers stop
# the service's writes (it picks neither).
set -euo pipefail
host="$1"; port="$2"; shift 2
client=(mariadb -h"$host" -P"$port" "$@")
sql() { "${client[@]}" -N -e "$1"; }
status() { "${client[@]}" -e 'SHOW SLAVE STATUS\G' | sed -n "s/^ *$1: //p"; }
if [ "$(status Slave_SQL_Running)" != Yes ]; then
  # a replica that stopped applying is behind by an unknown amount: promoting it would lose commits
  echo "promote $host:$port: its replication applier is not running: $(status Last_SQL_Error)"; exit 1
fi
sql "STOP SLAVE IO_THREAD"
received="$(status Gtid_IO_Pos)"
echo "promote $host:$port: applying everything received (up to ${received:-nothing})"
applied="$(sql "SELECT MASTER_GTID_WAIT('$received', 300)")"
[ "$applied" = 0 ] || { echo "promote $host:$port: the replica did not apply $received within 300 s"; exit 1; }
sql "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL rpl_semi_sync_master_enabled = ON; SET GLOBAL read_only = OFF"
echo "promote $host:$port: primary now (gtid $(sql 'SELECT @@gtid_binlog_pos'))"
