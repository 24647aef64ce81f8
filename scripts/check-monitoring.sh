#!/usr/bin/env bash
# Checks the monitoring files of deploy/ (docs/operations/README.md#metrics-and-alerts) with Prometheus' own tool:
#   - deploy/prometheus/alerts.yml is valid (`promtool check rules`) and its unit tests pass
#     (`promtool test rules deploy/prometheus/alerts.test.yml`: each alert fires at its threshold, not below);
#   - deploy/grafana/docnum-dashboard.json is valid JSON with panels, and every PromQL query in it parses
#     (the queries are checked as recording rules by promtool).
# That every metric name used there is one the service exports is checked by `cargo test --features ssr --test it metrics::`
# against a real scrape. promtool comes from Debian's `prometheus` package, installed when missing (with CI
# set, failing to install it fails the run).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/services.sh"
cd "$ROOT"

if ! command -v promtool >/dev/null; then
  log "installing promtool (Debian package prometheus, no recommends; its service is not started here)"
  { _services_as_root apt-get update -qq &&
      _services_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; } ||
    _services_unavailable "promtool" "apt-get install prometheus failed" || exit 0
fi

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
log "monitoring files OK"
