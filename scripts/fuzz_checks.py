"""Schemathesis hooks for scripts/fuzz-api.sh: one more check, `only_stated_refusals`.

The OpenAPI document carries every rule a schema can state (lengths, patterns, enums, minimums, which fields go
together). A few refusals depend on what is stored, which no schema can carry: the template of the project and type
(docs/rules/api.md#the-request-body-and-its-leniency: "a part it shows that is missing is a 400 naming it"; NB006 for a number or a template that does not
read), the clock (no back-dating), an import's rows against the reference data (the per-row report), a CSV text's
table (text/csv is a string to a schema), a webhook URL's grammar past its scheme (the WHATWG URL parser's) and the
addresses its host resolves to, the projects an originator belongs to. For the
operations that can answer so, fuzz-api.sh lets positive_data_acceptance take a 400, and this check then fails every 400 to a
request valid by the schema that is not one of those refusals, in those words.
"""

import re

import schemathesis

NUMBERING = re.compile(r"^/api/v1/(document-numbering/(preview|reserve|reserve-block)|documents/\{documentId\}/generate-number)$")
ADMIN_NUMBER = re.compile(r"^/api/v1/document-numbering/(revise|void-and-replace|manual-override)$")
TEMPLATES = re.compile(r"^/api/v1/document-numbering/configs(/\{id\}(/rollback)?)?$")
WEBHOOKS = re.compile(r"^/api/v1/notifications/webhooks$")
IMPORTS = re.compile(r"^/api/v1/((admin/)?document-numbering/(import|bulk-import)|reference/import)$")

# (operations, error codes allowed, VALIDATION_ERROR details allowed)
STATED = [
    (
        NUMBERING,
        {"INVALID_FORMAT"},
        re.compile(
            r"^validation: (missing required part: .*"
            r"|year \d+ is not the current year .*"
            r"|backdateReason needs the year of the earlier period to continue"
            r"|back-dating continues a closed calendar or fiscal year; .*"
            r"|year \d+ is not an earlier, closed period .*"
            r"|holdUntil must be in the future and at most \d+ days away"
            r"|(backdateReason|holder) must be at most \d+ printable characters"
            r"|project .* is inactive"
            r"|.* is not a member of project .*"
            # a project derived from the originator: which projects it belongs to is stored data
            r"|missing projectId or projectCode: originator .* belongs to (no active project|several active projects: .*)"
            r"|give either recipients or recipientOrgId/recipientCode, not both)$"
        ),
    ),
    (ADMIN_NUMBER, {"INVALID_FORMAT"}, None),
    (TEMPLATES, {"INVALID_FORMAT"}, None),
    # a URL that starts http(s):// but does not read as one with a host (the WHATWG grammar: no pattern states it)
    # and a host that is, or resolves to, an address inside a network (DNS is not the schema's)
    (WEBHOOKS, set(), re.compile(r"^validation: (url must be http\(s\)://host…|webhook target \S+ refused \([^)]*\): .*)$")),
    # and a CSV text that is not the import's table (a JSON schema of text/csv is a string; it cannot state a CSV grammar)
    (IMPORTS, {"IMPORT_REJECTED"}, re.compile(r"^validation: (CSV needs a header row|CSV header: .*|CSV: .*|unknown CSV column .*|row has \d+ fields, the header \d+)$")),
]


@schemathesis.check
def only_stated_refusals(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        body = response.json()
    except Exception:
        body = {}
    error, detail = body.get("error"), body.get("detail") or ""
    for operations, codes, details in STATED:
        if operations.match(case.path):
            if error in codes or (details is not None and error == "VALIDATION_ERROR" and details.match(detail)):
                return None
    raise AssertionError(f"A request valid by the schema was refused with a 400 no schema can explain: {error}: {detail}")
