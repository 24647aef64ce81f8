#!/usr/bin/env bash
# Makes a server a replica of the primary: the old primary after a failover, or a new replica (docs/operations/README.md#failover;
# deploy/README.md, "Database failover").
#   deploy/mariadb/rejoin.sh HOST PORT PRIMARY_HOST PRIMARY_PORT REPL_USER REPL_PASSWORD [mariadb client options…]
# Start the old primary with --init-rpl-role=SLAVE first (and read_only = ON, as replication.cnf has it): its crash
# recovery then drops the binlog tail that no replica acknowledged. Its replication position is its own binlog's,
# so it asks the new primary for everything after it; gtid_strict_mode stops it if it still holds a transaction
# the new primary lacks (then rebuild it from a backup of the new primary instead).
set -euo pipefail
host="$1"; port="$2"; primary_host="$3"; primary_port="$4"; user="$5"; password="$6"; shift 6
client=(mariadb -h"$host" -P"$port" "$@")
status() { "${client[@]}" -e 'SHOW SLAVE STATUS\G' | sed -n "s/^ *$1: //p"; }
"${client[@]}" -N -e "
  STOP SLAVE;
  SET GLOBAL read_only = ON;
  SET GLOBAL rpl_semi_sync_master_enabled = OFF;
  SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos;
  CHANGE MASTER TO MASTER_HOST = '$primary_host', MASTER_PORT = $primary_port, MASTER_USER = '$user',
    MASTER_PASSWORD = '$password', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1;
  START SLAVE;"
for _ in $(seq 1 100); do
  if [ "$(status Slave_IO_Running)" = Yes ] && [ "$(status Slave_SQL_Running)" = Yes ]; then
    echo "rejoin $host:$port: replica of $primary_host:$primary_port"; exit 0
  fi
  sleep 0.2
done
"${client[@]}" -e 'SHOW SLAVE STATUS\G' | grep -E 'Running|Error' || true
echo "rejoin $host:$port: replication did not start"; exit 1
