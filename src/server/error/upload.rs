//! Uploads: a body read as text, an import's report as the answer (the bulk import, the reference data).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::{AppError, ErrorBody};

/// An import that was refused: the error body, with the per-row report when the rows could be read
/// (`code` = `IMPORT_REJECTED`; nothing was changed).
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ImportRejected {
    #[serde(flatten)]
    pub(crate) error: ErrorBody,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) report: Option<crate::contract::import::ImportReport>,
}

/// The body as text, at most `limit` bytes (413 with the error body beyond), valid UTF-8 (else 400).
pub(crate) async fn body_text(request: axum::extract::Request, limit: usize) -> Result<String, AppError> {
    let bytes = axum::body::to_bytes(request.into_body(), limit).await.map_err(|_| AppError::PayloadTooLarge)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| AppError::validation("ข้อมูลที่ส่งมาต้องเป็นข้อความ UTF-8", "the body is not UTF-8 text"))
}

/// 200 with the report, or — when an import to apply had refused rows — 400 with the error body and the report.
pub(crate) fn report_response(report: crate::contract::import::ImportReport) -> Response {
    if report.dry_run || report.applied {
        return axum::Json(report).into_response();
    }
    let err = AppError::validation(
        format!("นำเข้าไม่สำเร็จ: มีข้อมูลไม่ถูกต้อง {} แถว จึงไม่ได้บันทึกข้อมูลใดเลย", report.error_rows),
        format!("import refused: {} of {} rows are invalid; nothing was changed", report.error_rows, report.total),
    );
    let mut error = err.body();
    error.code = "IMPORT_REJECTED".into();
    error.error = "IMPORT_REJECTED".into();
    (StatusCode::BAD_REQUEST, axum::Json(ImportRejected { error, report: Some(report) })).into_response()
}
