#!/usr/bin/env bash
# Checks the monitoring files of deploy/ (docs/operations/README.md#metrics-and-alerts) with Prometheus' own tool:
#   - deploy/prometheus/alerts.yml is valid (`promtool check rules`) and its unit tests pass
#     (`promtool test rules deploy/prometheus/alerts.test.yml`: each alert fires at its threshold, not below);
#   - deploy/grafana/docnum-dashboard.json is valid JSON with panels, and every PromQL query in it parses
#     (the queries are checked as recording rules by promtool);
#   - deploy/alertmanager/alertmanager.yml is valid (`amtool check-config`) and routes each severity where
#     requirements 3.11.10.2 says (`amtool config routes test`: critical → pager + chat, warning → chat, info → mail);
#   - deploy/systemd/docnum.service and docnum-witness.service pass `systemd-analyze verify` with no warning, each
#     confined to its own user and state directory, and the service's stop timeout is longer
#     than the service's default SHUTDOWN_GRACE_SECS plus its 2 s margin.
# That every metric name used there is one the service exports is checked by `cargo test --features ssr --test it metrics::`
# against a real scrape. promtool comes from Debian's `prometheus` package and amtool from
# `prometheus-alertmanager`, installed when missing (with CI set, failing to install them fails the run).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"

ensure_monitoring_tools ||
  _services_unavailable "promtool and amtool" "apt-get install prometheus prometheus-alertmanager failed" || exit 0

log "alert rules: promtool check rules + unit tests"
promtool check rules deploy/prometheus/alerts.yml
(cd deploy/prometheus && promtool test rules alerts.test.yml)

log "Grafana dashboard: JSON structure and every query's PromQL"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 - deploy/grafana/docnum-dashboard.json "$tmp/dashboard-queries.yml" <<'PY'
import json, sys
dash = json.load(open(sys.argv[1]))
assert dash.get("title") and dash.get("uid"), "dashboard needs a title and a uid"
panels = [p for p in dash["panels"] if p.get("type") != "row"]
assert panels, "no panels"
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "panel ids must be unique"
rules = []
for p in panels:
    assert p.get("title") and p.get("targets"), f"panel {p.get('id')} needs a title and targets"
    for t in p["targets"]:
        # dashboard variables become plain values so promtool can parse the query
        expr = t["expr"].replace("$job", ".*")
        rules.append({"record": f"dashboard:panel_{p['id']}_{t['refId']}", "expr": expr})
with open(sys.argv[2], "w") as f:
    json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)  # JSON is YAML
print(f"{len(panels)} panels, {len(rules)} queries")
PY
promtool check rules "$tmp/dashboard-queries.yml"

log "Alertmanager: amtool check-config + the route of each severity"
amtool check-config deploy/alertmanager/alertmanager.yml
route_of() { amtool config routes test --config.file=deploy/alertmanager/alertmanager.yml "severity=$1" alertname=DocnumRouteCheck job=docnum 2>/dev/null; }
for expected in "critical oncall-pager,ops-chat" "warning ops-chat" "info ops-mail"; do
  severity="${expected%% *}" want="${expected#* }"
  got="$(route_of "$severity")"
  [ "$got" = "$want" ] || { echo "ERROR: severity=$severity goes to '$got', not '$want'" >&2; exit 1; }
  echo "severity=$severity → $got"
done

log "systemd units: systemd-analyze verify (no warning) + stop timeout"
if ! command -v systemd-analyze >/dev/null; then
  _services_unavailable "systemd-analyze" "not installed (Debian package systemd)" || exit 0
else
  # verify wants ExecStart's binary to exist: each unit is checked with a stand-in at a path of the temp dir
  mkdir -p "$tmp/bin"
  printf '#!/bin/sh\n' >"$tmp/bin/docnum" && chmod +x "$tmp/bin/docnum"
  for unit in docnum docnum-witness; do
    sed "s#/usr/local/bin/docnum#$tmp/bin/docnum#" "deploy/systemd/$unit.service" >"$tmp/$unit.service"
    out="$(systemd-analyze verify "$tmp/$unit.service" 2>&1)" || { echo "$out" >&2; exit 1; }
    [ -z "$out" ] || { echo "ERROR: systemd-analyze verify warns on $unit.service:" >&2; echo "$out" >&2; exit 1; }
    for directive in "User=$unit" "ProtectSystem=strict" "NoNewPrivileges=true" "ReadWritePaths=/var/lib/$unit" \
                     "Restart=on-failure" "CapabilityBoundingSet=$"; do
      grep -q "^$directive" "deploy/systemd/$unit.service" || { echo "ERROR: $unit.service lacks $directive" >&2; exit 1; }
    done
    [ "$(grep -c '^ReadWritePaths=' "deploy/systemd/$unit.service")" = 1 ] || { echo "ERROR: $unit.service: one ReadWritePaths only" >&2; exit 1; }
  done
  grep -q "^LimitNOFILE=" deploy/systemd/docnum.service || { echo "ERROR: docnum.service lacks LimitNOFILE=" >&2; exit 1; }
  stop="$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' deploy/systemd/docnum.service)"
  grace="$(sed -n 's/^pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(\([0-9]*\));$/\1/p' src/server/config.rs)"
  [ -n "$stop" ] && [ -n "$grace" ] && [ "$stop" -gt $((grace + 2)) ] ||
    { echo "ERROR: TimeoutStopSec ($stop) must exceed SHUTDOWN_GRACE_SECS ($grace) + 2" >&2; exit 1; }
  echo "docnum.service and docnum-witness.service verified; TimeoutStopSec=$stop > SHUTDOWN_GRACE_SECS $grace + 2"
fi
log "monitoring files OK"
