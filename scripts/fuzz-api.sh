#!/usr/bin/env bash
# API fuzzing with Schemathesis (4.x, from PyPI): starts the built server on a free loopback port with a fresh
# SQLite file, the demo data and rate limits off, and runs Schemathesis against /api/v1/openapi.json twice —
# once with an API token of the super admin, once with the super admin's session cookie (and the service's own
# Origin, which the CSRF rule asks of cookie-bearing changes). Every phase (examples, coverage, fuzzing,
# stateful); the checks: no 5xx, and every answer matches the document. Fails on any 5xx, dropped connection
# or answer that does not match the document. Operations whose path names an id get a real one (schemathesis.toml,
# written below), so they are fuzzed past the 404 of an unknown id.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -z "${SERVER_BIN:-}" ]; then build_site; fi
ensure_schemathesis

MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-30}"
# FUZZ_SEED: Hypothesis' seed, for a run that can be repeated case for case (scripts/test.sh pins one under CI);
# unset, every run draws its own and explores further (the seed is in the summary, to repeat a failure)
SEED_ARGS=()
if [ -n "${FUZZ_SEED:-}" ]; then SEED_ARGS=(--seed "$FUZZ_SEED"); fi
work="$(mktemp -d)"
port="$(free_port)"
base="http://127.0.0.1:$port"
export DATABASE_URL="sqlite://$work/fuzz.db"
admin_password="fuzz-admin-pass"
log "starting the server for API fuzzing on 127.0.0.1:$port"
(cd "$ROOT" && BOOTSTRAP_ADMIN_PASSWORD="$admin_password" CLOCK_START="2025-06-15T03:00:00Z" \
   RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_GLOBAL_PER_MIN=0 RATE_LIMIT_TOKEN_PER_MIN=0 \
   RUST_LOG="${RUST_LOG:-warn}" exec "$SERVER_BIN" serve --addr "127.0.0.1:$port") > "$work/server.log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; wait $server_pid 2>/dev/null || true' EXIT
wait_for_health "127.0.0.1:$port" 60 || { cat "$work/server.log"; exit 1; }

# an API token of the super admin, for every project
token="$("$SERVER_BIN" create-token --name schemathesis)"
# the super admin's session cookie
session="$(curl -fsS -c - -o /dev/null -H 'Content-Type: application/json' -H "Origin: $base" \
  --data "{\"username\":\"admin\",\"password\":\"$admin_password\"}" "$base/api/v1/auth/login" | awk '$6 == "docnum_session" { print $7 }')"
[ -n "$token" ] && [ -n "$session" ] || { echo "could not get a token and a session" >&2; exit 1; }

# Real ids for the operations that name one in their path, so that the fuzzer gets past 404 there too: the counter of
# one reserved number and its open reset request, a staff user, a template configuration, an error-log row and a
# token of its own to revoke. Schemathesis reads them from schemathesis.toml in its working directory.
as_admin() { curl -fsS -H 'Content-Type: application/json' -H "Origin: $base" -H "Cookie: docnum_session=$session" "$@"; }
json_field() { python3 -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1:]: v = v[int(k) if k.isdigit() else k]
print(v)' "$@"; }
letter='{"projectCode":"LCBP3","correspondenceTypeCode":"LETTER","originatorCode":"คคง.","recipientCode":"สคฉ.3"'
curl -fsS -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data "$letter}" "$base/api/v1/document-numbering/reserve"
# a back-dated request: refused, and a VALIDATION_ERROR row in the error log
curl -sS -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data "$letter,\"year\":1999}" "$base/api/v1/document-numbering/reserve"
counter_id="$(as_admin "$base/api/v1/document-numbering/counters" | json_field 0 id)"
public_id="$(as_admin --data '{"newValue":0,"reason":"a reset request for the fuzzer to act on"}' \
  "$base/api/v1/document-numbering/counters/$counter_id/reset-requests" | json_field workflow instancePublicId)"
staff_id="$(as_admin --data '{"username":"fuzz-staff","password":"fuzz-staff-pass-1","role":"STAFF"}' "$base/api/v1/admin/users" | json_field id)"
config_id="$(as_admin "$base/api/v1/document-numbering/configs" | json_field 0 id)"
error_id="$(as_admin "$base/api/v1/document-numbering/logs/errors" | json_field rows 0 id)"
"$SERVER_BIN" create-token --name schemathesis-revocable > /dev/null
revocable_id="$(as_admin "$base/api/v1/admin/api-tokens" | python3 -c 'import json, sys
print(next(t["id"] for t in json.load(sys.stdin) if t["name"] == "schemathesis-revocable"))')"
# positive_data_acceptance's own list (Schemathesis' default), and 400
with_400='"2xx", "3xx", "401", "403", "404", "409", "429", "5xx", "400"'
# an Idempotency-Key the fuzzer draws twice for two different requests is 422 (docs/rules/api.md#idempotency-keys)
keyed='"2xx", "3xx", "401", "403", "404", "409", "429", "5xx", "422"'
cat > "$work/schemathesis.toml" <<TOML
[[operations]]
include-path-regex = "^/api/v1/document-numbering/counters/\\\\{id\\\\}/"
parameters = { "path.id" = $counter_id }

[[operations]]
include-path-regex = "^/api/v1/workflow/\\\\{publicId\\\\}"
parameters = { "path.publicId" = "$public_id" }

[[operations]]
include-path-regex = "^/api/v1/admin/users/\\\\{id\\\\}"
parameters = { "path.id" = $staff_id }

[[operations]]
include-path-regex = "^/api/v1/document-numbering/configs/\\\\{id\\\\}"
parameters = { "path.id" = $config_id }
# a template that does not read is NB006, a 400 (docs/rules/api.md#errors): scripts/fuzz_checks.py lets that one through
checks.positive_data_acceptance.expected-statuses = [$with_400]

[[operations]]
include-path = "/api/v1/document-numbering/logs/errors/{id}/resolve"
parameters = { "path.id" = $error_id }

[[operations]]
include-path = "/api/v1/admin/api-tokens/{id}"
parameters = { "path.id" = $revocable_id }

# the refusals that depend on what is stored (a template, the clock, an import's rows) or on a grammar no pattern
# states (a webhook's URL): a 400 that positive data may
# get here, in the words scripts/fuzz_checks.py allows and no others
[[operations]]
include-path-regex = "^/api/v1/((admin/)?document-numbering/(preview|reserve|reserve-block|revise|void-and-replace|manual-override|configs|import|bulk-import)|documents/\\\\{documentId\\\\}/generate-number|reference/import|notifications/webhooks)$"
checks.positive_data_acceptance.expected-statuses = [$with_400, "422"]

[[operations]]
include-path-regex = "^/api/v1/document-numbering/(confirm|cancel)$"
checks.positive_data_acceptance.expected-statuses = [$keyed]
TOML
log "fixed ids for the fuzzer: counter $counter_id, reset request $public_id, user $staff_id, configuration $config_id, error $error_id, token $revocable_id"

# One run per way of authenticating, each in a directory of its own whose schemathesis.toml is the one above plus the
# credentials of that run, named by the document's security scheme: Schemathesis then sends them as the scheme says
# (and, for the ignored_auth check, takes them away or spoils them) instead of generating credentials of its own.
fuzz() {
  local name="$1" auth="$2"; shift 2
  log "schemathesis ($name): all phases, every check, $MAX_EXAMPLES examples per operation"
  mkdir -p "$work/$name"
  { cat "$work/schemathesis.toml"; printf '\n%s\n' "$auth"; } > "$work/$name/schemathesis.toml"
  # run in the run's directory: Schemathesis reads schemathesis.toml there and keeps its cache (.schemathesis/) there
  (cd "$work/$name" && SCHEMATHESIS_HOOKS=fuzz_checks PYTHONPATH="$ROOT/scripts" "$SCHEMATHESIS" run "$base/api/v1/openapi.json" --url "$base" \
    --phases "${FUZZ_PHASES:-examples,coverage,fuzzing,stateful}" \
    --checks all \
    --max-examples "$MAX_EXAMPLES" --request-timeout 30 "${SEED_ARGS[@]}" \
    --report junit --report-junit-path "$work/$name.xml" \
    "$@")
}

status=0
# The token run leaves out revoking API tokens (the only operation of that path): the fuzzer would revoke the very token it authenticates with and
# test everything after that as 401. The cookie run covers revoking.
# Both leave out the live event stream (GET /api/v1/events): it lasts as long as its client, so every example would wait out
# the request timeout; tests/it/live.rs covers it (who sees what, 401, 429).
fuzz bearer "$(printf '[auth.openapi.bearer]\nbearer = "%s"' "$token")" \
  --exclude-path '/api/v1/admin/api-tokens/{id}' --exclude-path /api/v1/events || status=1
# The cookie run leaves out logout (POST, the only operation of that path): it would end the session it authenticates with. The token run covers it.
fuzz cookie "$(printf '[auth.openapi.session]\napi_key = "%s"' "$session")" -H "Origin: $base" \
  --exclude-path /api/v1/auth/logout --exclude-path /api/v1/events || status=1

if grep -q "panicked" "$work/server.log"; then
  echo "the server panicked:" >&2
  grep -A5 "panicked" "$work/server.log" >&2
  status=1
fi
if [ $status -ne 0 ]; then echo "--- server log ---"; tail -n 50 "$work/server.log"; fi
exit $status
