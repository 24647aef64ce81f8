//! REST: `POST /api/v1/document-numbering/import?dryRun=true&format=json|csv&reason=…` with the rows as a JSON
//! body or as `text/csv`. Thin: read the body (own size limit), call the engine, answer.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;

use super::MAX_BYTES;
use crate::contract::import::{ImportFormat, ImportReport};
use crate::server::auth::Caller;
use crate::server::error::{ApiQuery, AppError};
use crate::server::AppState;

/// The bulk import route (under `/api/v1`); it reads its body with its own, larger limit.
pub fn router() -> Router<AppState> {
    Router::new().route("/document-numbering/import", post(import))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportQuery {
    /// Default false: apply. `true`: check every row, change nothing.
    pub dry_run: Option<bool>,
    /// `json` or `csv`; default from the Content-Type (`text/csv` → csv, else json).
    pub format: Option<ImportFormat>,
    /// The reason recorded in every audit row (JSON bodies may carry `reason` too).
    pub reason: Option<String>,
}

/// The body as text, at most `limit` bytes (413 with the §6 body beyond), valid UTF-8 (else 400).
pub async fn body_text(request: Request, limit: usize) -> Result<String, AppError> {
    let bytes = axum::body::to_bytes(request.into_body(), limit).await.map_err(|_| AppError::PayloadTooLarge)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| AppError::validation("ข้อมูลที่ส่งมาต้องเป็นข้อความ UTF-8", "the body is not UTF-8 text"))
}

/// `POST /document-numbering/import` — bulk import of counters and legacy numbers (super admins).
#[utoipa::path(post, path = "/api/v1/document-numbering/import",
    params(
        ("dryRun" = Option<bool>, Query, description = "true: report only, change nothing"),
        ("format" = Option<String>, Query, description = "json | csv (default: from Content-Type)"),
        ("reason" = Option<String>, Query, description = "recorded in the audit rows"),
    ),
    request_body(content = String, description = "JSON `[row, …]` or `{\"reason\", \"rows\": [row, …]}`, or CSV (text/csv) with a header row. \
        A row is a legacy number {projectCode, correspondenceTypeCode, documentNumber, documentId?} or a counter value \
        {projectCode, correspondenceTypeCode, originatorCode?, recipientCode?, subTypeNumber?, rfaTypeCode?, disciplineCode?, year?, month?, value}. \
        At most 10,000 rows and 2 MiB."),
    responses(
        (status = 200, body = ImportReport, description = "the report; applied = true when the rows were written (all or nothing)"),
        (status = 400, description = "malformed text, or (when applying) a row is refused: the §6 error body plus `report` with every row; nothing was changed"),
        (status = 403, body = crate::server::error::ErrorBody, description = "not a super admin (NB007)"),
        (status = 413, body = crate::server::error::ErrorBody),
    ),
    tag = "numbering")]
pub async fn import(State(s): State<AppState>, caller: Caller, ApiQuery(q): ApiQuery<ImportQuery>, request: Request) -> Result<Response, AppError> {
    // refuse before reading a large body
    if caller.require_super_admin().is_err() {
        return Err(AppError::ManualOverrideNotAllowed);
    }
    let is_csv = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.trim_start().to_ascii_lowercase().starts_with("text/csv"));
    let format = q.format.unwrap_or(if is_csv { ImportFormat::Csv } else { ImportFormat::Json });
    let text = body_text(request, MAX_BYTES).await?;
    let dry_run = q.dry_run.unwrap_or(false);
    let report = super::bulk_import(&s, &caller, &text, format, q.reason.as_deref(), dry_run).await?;
    Ok(report_response(report))
}

/// 200 with the report, or — when an import to apply had refused rows — 400 with the §6 body and the report.
pub fn report_response(report: ImportReport) -> Response {
    if report.dry_run || report.applied {
        return Json(report).into_response();
    }
    let err = AppError::validation(
        format!("นำเข้าไม่สำเร็จ: มีข้อมูลไม่ถูกต้อง {} แถว จึงไม่ได้บันทึกข้อมูลใดเลย", report.error_rows),
        format!("import refused: {} of {} rows are invalid; nothing was changed", report.error_rows, report.total),
    );
    let mut body = serde_json::to_value(err.body()).unwrap_or_default();
    body["code"] = "IMPORT_REJECTED".into();
    body["error"] = "IMPORT_REJECTED".into();
    body["report"] = serde_json::to_value(&report).unwrap_or_default();
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}
