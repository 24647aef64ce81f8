//! The OpenAPI document is built from the router (`server::http::api`): every route of the REST API is in it, with
//! its request body, its parameters and its answers, and every schema it names is defined.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::TestApp;

/// Every route of the REST API, as served (method, path under the real mount point).
const ROUTES: &[(&str, &str)] = &[
    // auth, API tokens, users
    ("post", "/api/v1/auth/login"),
    ("post", "/api/v1/auth/logout"),
    ("get", "/api/v1/auth/me"),
    ("post", "/api/v1/auth/password"),
    ("get", "/api/v1/admin/api-tokens"),
    ("post", "/api/v1/admin/api-tokens"),
    ("delete", "/api/v1/admin/api-tokens/{id}"),
    ("get", "/api/v1/admin/users"),
    ("post", "/api/v1/admin/users"),
    ("put", "/api/v1/admin/users/{id}"),
    ("post", "/api/v1/admin/users/{id}/deactivate"),
    ("post", "/api/v1/admin/users/{id}/reactivate"),
    ("post", "/api/v1/admin/users/{id}/password"),
    // numbering
    ("post", "/api/v1/document-numbering/preview"),
    ("post", "/api/v1/document-numbering/reserve"),
    ("get", "/api/v1/document-numbering/register"),
    ("post", "/api/v1/document-numbering/reserve-block"),
    ("get", "/api/v1/document-numbering/blocks"),
    ("get", "/api/v1/document-numbering/blocks/{blockId}"),
    ("post", "/api/v1/document-numbering/confirm"),
    ("post", "/api/v1/document-numbering/cancel"),
    ("get", "/api/v1/document-numbering/receipts"),
    ("get", "/api/v1/document-numbering/receipts/qr"),
    ("get", "/api/v1/document-numbering/receipts/stamp"),
    ("post", "/api/v1/documents/{documentId}/generate-number"),
    ("post", "/api/v1/document-numbering/revise"),
    ("post", "/api/v1/document-numbering/void-and-replace"),
    ("post", "/api/v1/document-numbering/manual-override"),
    ("post", "/api/v1/document-numbering/counters/{id}/resume-past-witness"),
    ("post", "/api/v1/document-numbering/void"),
    ("post", "/api/v1/document-numbering/configs/{id}/retire"),
    ("post", "/api/v1/document-numbering/import"),
    // the requirements' paths (aliases)
    ("get", "/api/v1/admin/login-attempts"),
    ("get", "/api/v1/document-numbering/sequences"),
    ("post", "/api/v1/document-numbering/bulk-import"),
    ("post", "/api/v1/document-numbering/configs/{id}/reset-counter"),
    ("get", "/api/v1/document-numbering/metrics"),
    ("get", "/api/v1/admin/document-numbering/metrics"),
    ("post", "/api/v1/admin/document-numbering/manual-override"),
    ("post", "/api/v1/admin/document-numbering/void-and-replace"),
    ("post", "/api/v1/admin/document-numbering/cancel"),
    ("post", "/api/v1/admin/document-numbering/bulk-import"),
    ("get", "/api/v1/document-numbering/stats/daily"),
    ("get", "/api/v1/document-numbering/stats/utilization"),
    // templates
    ("get", "/api/v1/document-numbering/configs"),
    ("post", "/api/v1/document-numbering/configs"),
    ("get", "/api/v1/document-numbering/configs/{id}"),
    ("put", "/api/v1/document-numbering/configs/{id}"),
    ("get", "/api/v1/document-numbering/configs/{id}/versions"),
    ("post", "/api/v1/document-numbering/configs/{id}/rollback"),
    // counters, reset requests, workflow
    ("get", "/api/v1/document-numbering/counters"),
    ("get", "/api/v1/document-numbering/counters/{id}/numbers"),
    ("post", "/api/v1/document-numbering/counters/{id}/reset-requests"),
    ("get", "/api/v1/workflow/reset-requests"),
    ("get", "/api/v1/workflow/{publicId}"),
    ("post", "/api/v1/workflow/{publicId}/actions/{action}"),
    // audit and error logs
    ("get", "/api/v1/events"),
    ("get", "/api/v1/document-numbering/logs/audit"),
    ("get", "/api/v1/document-numbering/logs/audit/verify"),
    ("get", "/api/v1/document-numbering/logs/errors"),
    ("post", "/api/v1/document-numbering/logs/errors/{id}/resolve"),
    // reference data
    ("get", "/api/v1/reference/projects"),
    ("post", "/api/v1/reference/projects"),
    ("put", "/api/v1/reference/projects/{id}"),
    ("get", "/api/v1/reference/organizations"),
    ("post", "/api/v1/reference/organizations"),
    ("put", "/api/v1/reference/organizations/{id}"),
    ("get", "/api/v1/reference/correspondence-types"),
    ("post", "/api/v1/reference/correspondence-types"),
    ("put", "/api/v1/reference/correspondence-types/{id}"),
    ("get", "/api/v1/reference/sub-types"),
    ("post", "/api/v1/reference/sub-types"),
    ("put", "/api/v1/reference/sub-types/{id}"),
    ("get", "/api/v1/reference/rfa-types"),
    ("post", "/api/v1/reference/rfa-types"),
    ("put", "/api/v1/reference/rfa-types/{id}"),
    ("get", "/api/v1/reference/disciplines"),
    ("post", "/api/v1/reference/disciplines"),
    ("put", "/api/v1/reference/disciplines/{id}"),
    ("get", "/api/v1/reference/contracts"),
    ("post", "/api/v1/reference/contracts"),
    ("put", "/api/v1/reference/contracts/{id}"),
    ("post", "/api/v1/reference/import"),
    // notifications: webhooks, deliveries, what waits for the caller
    ("get", "/api/v1/notifications/webhooks"),
    ("post", "/api/v1/notifications/webhooks"),
    ("patch", "/api/v1/notifications/webhooks/{id}"),
    ("delete", "/api/v1/notifications/webhooks/{id}"),
    ("post", "/api/v1/notifications/webhooks/{id}/replay"),
    ("get", "/api/v1/notifications/deliveries"),
    ("post", "/api/v1/notifications/deliveries/{id}/replay"),
    ("get", "/api/v1/notifications/waiting"),
];

const METHODS: &[&str] = &["get", "put", "post", "delete", "patch", "head", "options", "trace"];

async fn served_document() -> Value {
    let app = TestApp::spawn().await;
    let r = app.client.get(app.url("/api/v1/openapi.json")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.unwrap()
}

fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().unwrap() {
            if METHODS.contains(&method.as_str()) {
                out.push((method.clone(), path.clone(), op));
            }
        }
    }
    out
}

#[tokio::test]
async fn the_document_lists_every_route_and_no_other() {
    let doc = served_document().await;
    // the document served is the one the router builds
    assert_eq!(doc, serde_json::to_value(docnum::server::http::openapi()).unwrap());
    let documented: BTreeSet<(String, String)> = operations(&doc).into_iter().map(|(m, p, _)| (m, p)).collect();
    let expected: BTreeSet<(String, String)> = ROUTES.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    let missing: Vec<_> = expected.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&expected).collect();
    assert!(missing.is_empty(), "routes missing from the document: {missing:?}");
    assert!(extra.is_empty(), "documented routes this test does not know (add them to ROUTES): {extra:?}");
}

#[tokio::test]
async fn the_documented_paths_are_the_served_paths() {
    let app = TestApp::spawn().await;
    let doc: Value = app.client.get(app.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
    // every documented operation answers as an API route (the error body), never the JSON 404 of an unknown path
    // nor axum's 405; path parameters are filled with something of the right shape
    for (method, path, _) in operations(&doc) {
        let filled: Vec<&str> = path
            .split('/')
            .map(|segment| match segment {
                "{publicId}" => "none",
                "{action}" => "APPROVE",
                "{documentId}" => "DOC-1",
                s if s.starts_with('{') => "1",
                s => s,
            })
            .collect();
        let url = app.url(&filled.join("/"));
        let r = app
            .client
            .request(method.to_uppercase().parse().unwrap(), &url)
            .bearer_auth(&app.token)
            .header("content-type", "application/json")
            .body("{")
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path} ({url}) is not served");
        if status == StatusCode::NOT_FOUND {
            let body: Value = r.json().await.unwrap();
            assert_ne!(body["detail"], "not found: no such API endpoint", "{method} {path} ({url}) is not served");
        }
    }
}

#[tokio::test]
async fn every_body_and_answer_has_a_schema_and_every_reference_resolves() {
    let doc = served_document().await;
    for (method, path, op) in operations(&doc) {
        if method == "post" || method == "put" {
            // logout and the actions without input take no body; everything else says what it reads
            let bodiless = [
                "/api/v1/auth/logout",
                "/api/v1/admin/users/{id}/deactivate",
                "/api/v1/admin/users/{id}/reactivate",
                "/api/v1/document-numbering/logs/errors/{id}/resolve",
                "/api/v1/notifications/webhooks/{id}/replay",
                "/api/v1/notifications/deliveries/{id}/replay",
            ];
            if !bodiless.contains(&path.as_str()) {
                let content = op["requestBody"]["content"].as_object().unwrap_or_else(|| panic!("{method} {path} has no requestBody"));
                assert!(!content.is_empty(), "{method} {path}: empty requestBody");
                for (media, c) in content {
                    assert!(c["schema"].is_object(), "{method} {path}: requestBody {media} has no schema");
                }
            }
        }
        let responses = op["responses"].as_object().unwrap_or_else(|| panic!("{method} {path} has no responses"));
        assert!(responses.contains_key("200"), "{method} {path}: no 200 answer");
        for (status, r) in responses {
            let content = r["content"].as_object().unwrap_or_else(|| panic!("{method} {path} {status}: no body documented"));
            for (media, c) in content {
                assert!(c["schema"].is_object(), "{method} {path} {status} {media}: no schema");
            }
            if status != "200" {
                assert!(status.starts_with('4') || status.starts_with('5'), "{method} {path}: unexpected status {status}");
            }
        }
        // public: logging in, and a number's receipt, its QR code and stamp (the transparency log publishes it anyway)
        let public = [
            "/api/v1/auth/login",
            "/api/v1/auth/logout",
            "/api/v1/document-numbering/receipts",
            "/api/v1/document-numbering/receipts/qr",
            "/api/v1/document-numbering/receipts/stamp",
        ];
        if !public.contains(&path.as_str()) {
            assert!(responses.contains_key("401"), "{method} {path}: the 401 of an unauthenticated caller is not documented");
        }
        // path parameters are documented
        let params: Vec<&str> = op["parameters"]
            .as_array()
            .map(|a| a.iter().filter(|p| p["in"] == "path").filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        for segment in path.split('/').filter(|s| s.starts_with('{')) {
            let name = segment.trim_start_matches('{').trim_end_matches('}');
            assert!(params.contains(&name), "{method} {path}: path parameter {name} not documented");
        }
    }
    // every $ref names a component that exists
    let schemas = doc["components"]["schemas"].as_object().expect("components.schemas");
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
        assert!(schemas.contains_key(name), "$ref {r} does not resolve");
    }
    // no untyped JSON answers: every 200 names a schema with a type, a reference or a combination
    for (method, path, op) in operations(&doc) {
        for (media, c) in op["responses"]["200"]["content"].as_object().unwrap() {
            let s = &c["schema"];
            assert!(
                s.get("$ref").is_some() || s.get("type").is_some() || s.get("anyOf").is_some() || s.get("oneOf").is_some(),
                "{method} {path} 200 {media}: untyped schema {s}"
            );
        }
    }
    // operation ids are unique (tools link operations by them)
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path}: no operationId"));
        assert!(ids.insert(id.to_string()), "{method} {path}: operationId {id} is used twice");
    }
    // both ways of authenticating are described
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");
    assert_eq!(schemes["session"]["name"], "docnum_session");
}

/// The schema of property `name` somewhere inside `schema` (through `allOf`, `anyOf` and nesting).
fn property<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    if let Some(p) = schema.get("properties").and_then(|p| p.get(name)) {
        return Some(p);
    }
    match schema {
        Value::Object(m) => m.values().find_map(|v| property(v, name)),
        Value::Array(a) => a.iter().find_map(|v| property(v, name)),
        _ => None,
    }
}

#[tokio::test]
async fn an_admin_operation_states_that_its_document_number_is_not_blank() {
    // a schema-valid blank number was refused with a 400 the document did not state (found by fuzz-api.sh, 2026-12-02)
    let doc = served_document().await;
    for name in ["ReviseRequest", "VoidRequest"] {
        let number = property(&doc["components"]["schemas"][name], "documentNumber").unwrap_or_else(|| panic!("{name}: no documentNumber"));
        let pattern = number["pattern"].as_str().unwrap_or_else(|| panic!("{name}: documentNumber states no pattern: {number}"));
        assert!(pattern.starts_with('^') && pattern.ends_with('$') && pattern.contains("{0,98}"), "{name}: 1–100 characters, trimmed: {pattern}");
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    if let Some(s) = v.as_str() {
                        out.push(s.to_string());
                    }
                } else {
                    collect_refs(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}
