//! The one application error type: every failure of the engine, storage and access layers ends here,
//! and is mapped once to an HTTP status, an NB code and the Thai message of docs/rules/api.md#errors.

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::contract::ApiError;
pub(crate) use crate::contract::ErrorCode;

/// The cause of an internal failure. Shared (`Arc`), so that one failure can answer every job of a batch and
/// `AppError` stays `Clone`.
pub(crate) type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// The errors' `Display` is their own message only; [`AppError::report`] adds the chain of causes (for logs).
#[derive(Clone, Debug, thiserror::Error)]
pub enum AppError {
    #[error("numbering configuration not found: {0}")]
    ConfigNotFound(String),
    #[error("sequence exhausted: counter reached its maximum {max}")]
    SequenceExhausted { max: u64 },
    #[error("lock timeout on counter {key}")]
    LockTimeout { key: String, retry_after_secs: u64 },
    #[error("reservation expired")]
    ReservationExpired,
    #[error("duplicate document number {0}")]
    DuplicateNumber(String),
    #[error("invalid format: {en}")]
    InvalidFormat { th: String, en: String },
    #[error("manual override not allowed")]
    ManualOverrideNotAllowed,
    #[error("version conflict after retries on counter {0}")]
    VersionConflict(String),
    #[error("validation: {en}")]
    Validation { th: String, en: String },
    #[error("not found: {en}")]
    NotFound { th: String, en: String },
    #[error("conflict: {en}")]
    Conflict { code: ErrorCode, th: String, en: String },
    #[error("authentication required")]
    Unauthenticated,
    #[error("invalid username or password")]
    InvalidCredentials,
    /// A logged-in user's own password, given again to confirm a change, is not theirs.
    #[error("the current password is wrong")]
    WrongCurrentPassword,
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("rate limited ({scope})")]
    RateLimited { scope: &'static str, retry_after_secs: u64 },
    #[error("request body too large")]
    PayloadTooLarge,
    /// A state-changing request with a session cookie (or a login) from another site: CSRF (`server::edge`).
    #[error("cross-origin request refused: {0}")]
    CrossOrigin(String),
    #[error("unsupported media type: {0}")]
    UnsupportedMediaType(String),
    #[error("database error (ref {ref_id})")]
    Database {
        ref_id: String,
        #[source]
        source: Arc<sqlx::Error>,
    },
    #[error("internal error (ref {ref_id}): {message}")]
    Internal {
        ref_id: String,
        message: String,
        #[source]
        source: Option<Cause>,
    },
    /// The database's head of counter `key` (its audit chain's length) is behind its witness: nothing is issued on it
    /// until a super admin resumes it past the witnessed head (docs/rules/numbering.md#what-is-never-done-twice).
    #[error(
        "counter {key} is behind its witness: the database holds {stored} audit rows of it, the witness {witnessed} (last number {witnessed_last})"
    )]
    BehindWitness { key: String, counter_id: i64, stored: i64, witnessed: i64, witnessed_last: i64 },
    /// What a counter's lock holder answered a job this instance forwarded to it (`numbering::forward`): the
    /// holder's own error as it would have answered it (code, Thai message, reference, wait).
    #[error("{} (answered by the counter's lock holder)", .0.en)]
    Remote(RemoteError),
}

/// An `AppError` as it crosses from a counter's lock holder to the instance that forwarded the job: what the holder
/// would have answered (code, Thai message, reference, wait: a server function's `ApiError`) and its English detail.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RemoteError {
    #[serde(flatten)]
    pub(crate) answer: ApiError,
    /// The English detail (`Display`), for logs and the error body's `detail`.
    pub(crate) en: String,
}

impl From<&AppError> for RemoteError {
    fn from(e: &AppError) -> RemoteError {
        RemoteError { answer: ApiError::from(e), en: e.to_string() }
    }
}

/// The JSON error body (docs/rules/api.md#errors).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ErrorBody {
    pub(crate) status_code: u16,
    pub(crate) code: String,
    pub(crate) error: String,
    pub(crate) message: String,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub(crate) reference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) retry_after: Option<u64>,
    /// English detail for logs and developers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

impl AppError {
    pub(crate) fn validation(th: impl Into<String>, en: impl Into<String>) -> Self {
        AppError::Validation { th: th.into(), en: en.into() }
    }
    pub(crate) fn not_found(th: impl Into<String>, en: impl Into<String>) -> Self {
        AppError::NotFound { th: th.into(), en: en.into() }
    }
    pub(crate) fn forbidden(en: impl Into<String>) -> Self {
        AppError::Forbidden(en.into())
    }
    /// An internal failure with no underlying error (a broken invariant).
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        AppError::Internal { ref_id: new_ref_id(), message: message.into(), source: None }
    }

    /// An internal failure caused by `source`; `context` says what was being done.
    pub(crate) fn internal_from(context: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        AppError::Internal { ref_id: new_ref_id(), message: context.into(), source: Some(Arc::new(source)) }
    }

    /// A database failure; one failure may stand for several requests (a counter batch), hence the `Arc`.
    pub(crate) fn database(source: Arc<sqlx::Error>) -> Self {
        AppError::Database { ref_id: new_ref_id(), source }
    }

    /// The message followed by its chain of causes, `: `-separated: what logs and the error log record.
    pub(crate) fn report(&self) -> String {
        report(self)
    }

    /// What kind of error this is: decides the HTTP status and the `code` / `error` of the error body.
    pub fn code(&self) -> ErrorCode {
        use AppError::*;
        match self {
            ConfigNotFound(_) => ErrorCode::ConfigNotFound,
            SequenceExhausted { .. } => ErrorCode::SequenceExhausted,
            LockTimeout { .. } => ErrorCode::LockTimeout,
            ReservationExpired => ErrorCode::ReservationExpired,
            DuplicateNumber(_) => ErrorCode::DuplicateNumber,
            InvalidFormat { .. } => ErrorCode::InvalidFormat,
            ManualOverrideNotAllowed => ErrorCode::ManualOverrideNotAllowed,
            VersionConflict(_) => ErrorCode::VersionConflict,
            Validation { .. } => ErrorCode::ValidationError,
            NotFound { .. } => ErrorCode::NotFound,
            Conflict { code, .. } => *code,
            Unauthenticated => ErrorCode::Unauthenticated,
            InvalidCredentials | WrongCurrentPassword => ErrorCode::InvalidCredentials,
            Forbidden(_) => ErrorCode::Forbidden,
            RateLimited { .. } => ErrorCode::RateLimited,
            PayloadTooLarge => ErrorCode::PayloadTooLarge,
            CrossOrigin(_) => ErrorCode::Forbidden,
            UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            Database { .. } => ErrorCode::DbError,
            Internal { .. } => ErrorCode::InternalError,
            BehindWitness { .. } => ErrorCode::CounterBehindWitness,
            Remote(r) => r.answer.code,
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The message shown to people (Thai, docs/rules/api.md#errors).
    pub(crate) fn message_th(&self) -> String {
        use AppError::*;
        match self {
            ConfigNotFound(_) => "ไม่พบการตั้งค่ารูปแบบเลขที่เอกสาร".into(),
            SequenceExhausted { .. } => "เลขลำดับเต็มแล้ว กรุณาติดต่อผู้ดูแลระบบ".into(),
            LockTimeout { .. } => "ระบบกำลังยุ่ง กรุณาลองใหม่ภายหลัง".into(),
            ReservationExpired => "การจองเลขที่หมดอายุแล้ว กรุณาจองใหม่".into(),
            DuplicateNumber(_) => "เลขที่เอกสารนี้มีอยู่แล้ว".into(),
            InvalidFormat { th, .. } => format!("รูปแบบเลขที่เอกสารไม่ถูกต้อง: {th}"),
            ManualOverrideNotAllowed => "ไม่อนุญาตให้กำหนดเลขที่เอง".into(),
            VersionConflict(_) => "เลขที่เอกสารถูกเปลี่ยน กรุณาลองใหม่".into(),
            Validation { th, .. } => format!("ข้อมูลไม่ถูกต้อง: {th}"),
            NotFound { th, .. } => format!("ไม่พบข้อมูล: {th}"),
            Conflict { th, .. } => th.clone(),
            Unauthenticated => "กรุณาเข้าสู่ระบบก่อนใช้งาน".into(),
            InvalidCredentials => "ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง".into(),
            WrongCurrentPassword => "รหัสผ่านปัจจุบันไม่ถูกต้อง".into(),
            Forbidden(_) => "คุณไม่มีสิทธิ์ดำเนินการนี้".into(),
            RateLimited { scope, retry_after_secs } if scope.starts_with("login") => {
                format!("เข้าสู่ระบบไม่สำเร็จหลายครั้งเกินไป กรุณารอ {retry_after_secs} วินาทีแล้วลองใหม่")
            }
            RateLimited { scope: "events", .. } => "เปิดหน้าจอที่ติดตามการเปลี่ยนแปลงพร้อมกันมากเกินไป กรุณาปิดแท็บที่ไม่ใช้แล้วลองใหม่".into(),
            RateLimited { .. } => "มีการขอเลขที่บ่อยเกินไป กรุณารอสักครู่แล้วลองใหม่".into(),
            PayloadTooLarge => "ข้อมูลที่ส่งมามีขนาดใหญ่เกินไป".into(),
            CrossOrigin(_) => "คำขอนี้ไม่ได้มาจากหน้าเว็บของระบบ จึงถูกปฏิเสธ".into(),
            UnsupportedMediaType(_) => "ระบบรับเฉพาะข้อมูลแบบ JSON (Content-Type: application/json)".into(),
            Database { .. } | Internal { .. } => "เกิดข้อผิดพลาดในระบบ กรุณาติดต่อผู้ดูแลระบบ".into(),
            BehindWitness { counter_id, witnessed_last, .. } => format!(
                "ระงับการออกเลขของตัวนับ {counter_id}: ฐานข้อมูลย้อนหลังกว่าบันทึกยืนยันภายนอก (เลขล่าสุดที่ออกไปแล้วคือ {witnessed_last}) เช่น หลังกู้คืนข้อมูลสำรอง ผู้ดูแลระบบสูงสุดต้องอนุมัติให้ออกเลขต่อจากเลขนั้น"
            ),
            Remote(r) => r.answer.message.clone(),
        }
    }

    pub(crate) fn reference(&self) -> Option<&str> {
        match self {
            AppError::Database { ref_id, .. } | AppError::Internal { ref_id, .. } => Some(ref_id),
            AppError::Remote(r) => r.answer.reference.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            AppError::LockTimeout { retry_after_secs, .. } | AppError::RateLimited { retry_after_secs, .. } => Some(*retry_after_secs),
            AppError::Remote(r) => r.answer.retry_after,
            _ => None,
        }
    }

    /// The error-log type of docs/rules/numbering.md#audit-and-retention, for the errors worth recording there.
    pub(crate) fn log_type(&self) -> Option<&'static str> {
        // by code, so that an error a counter's lock holder answered (`Remote`) is logged as the holder's own
        Some(match self.code() {
            ErrorCode::LockTimeout => "LOCK_TIMEOUT",
            ErrorCode::VersionConflict => "VERSION_CONFLICT",
            ErrorCode::DbError | ErrorCode::InternalError => "DB_ERROR",
            // an unknown project, part, counter or number named in a numbering request is the caller's mistake as much as
            // a malformed one (it answers 404 since the name is well formed)
            ErrorCode::ValidationError | ErrorCode::InvalidFormat | ErrorCode::ConfigNotFound | ErrorCode::NotFound => "VALIDATION_ERROR",
            ErrorCode::SequenceExhausted => "SEQUENCE_EXHAUSTED",
            ErrorCode::ReservationExpired => "RESERVATION_EXPIRED",
            ErrorCode::DuplicateNumber => "DUPLICATE_NUMBER",
            ErrorCode::CounterBehindWitness => "COUNTER_BEHIND_WITNESS",
            _ => return None,
        })
    }

    pub(crate) fn body(&self) -> ErrorBody {
        let (status, code) = (self.status(), self.code());
        let detail = match code {
            ErrorCode::DbError | ErrorCode::InternalError => None, // never leak internals (a lock holder's neither)
            _ => Some(self.to_string()),
        };
        ErrorBody {
            status_code: status.as_u16(),
            code: code.code().to_string(),
            error: code.name().to_string(),
            message: self.message_th(),
            reference: self.reference().map(str::to_string),
            retry_after: self.retry_after(),
            detail,
        }
    }
}

impl From<&AppError> for ApiError {
    fn from(e: &AppError) -> ApiError {
        ApiError { code: e.code(), message: e.message_th(), reference: e.reference().map(str::to_string), retry_after: e.retry_after() }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self.report(), "request failed");
        }
        let body = self.body();
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after() {
            if let Ok(v) = HeaderValue::from_str(&secs.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        response
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        if crate::server::db::failure::classify(&e) == crate::server::db::failure::DbFailure::Connection {
            crate::server::db::failure::suspect_connections();
        }
        AppError::database(Arc::new(e))
    }
}

/// A database error inside a transaction that the operation retries: a lost race (MariaDB deadlock, lock wait
/// timeout) becomes a version conflict; anything else is a database error.
pub(crate) fn lost_race_as_conflict(e: sqlx::Error) -> AppError {
    match crate::server::db::failure::classify(&e) {
        crate::server::db::failure::DbFailure::RetryableConflict => AppError::VersionConflict("a transaction that lost a race to another".into()),
        _ => e.into(),
    }
}

/// An error and its chain of causes, `: `-separated.
pub fn report(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        // some errors (sqlx's among them) already end their own message with their cause's
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// A reference id people can quote to an administrator: `ERR-YYYYMMDD-HHMM-XXXX`.
pub(crate) fn new_ref_id() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    let suffix: String = (0..4).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect();
    format!("ERR-{}-{suffix}", chrono::Utc::now().format("%Y%m%d-%H%M"))
}

/// JSON body extractor whose rejections (malformed JSON, wrong types, wrong content type) answer with
/// the error body (docs/rules/api.md#errors) instead of axum's plain-text defaults.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T, S> axum::extract::FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::rejection::JsonRejection;
        if !is_json(req.headers()) {
            return Err(AppError::validation("ต้องส่งข้อมูลแบบ JSON (Content-Type: application/json)", "expected Content-Type: application/json"));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                AppError::PayloadTooLarge
            } else {
                AppError::validation("อ่านข้อมูลที่ส่งมาไม่ได้", e.body_text())
            }
        })?;
        let refused = match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(v)) => return Ok(ApiJson(v)),
            Err(e) => e,
        };
        // JSON has one kind of number: `7.0` is the integer 7 (so the OpenAPI document's `integer` says too). A body that
        // wrote an integer with a fraction reads again with its integral numbers as integers.
        if matches!(refused, JsonRejection::JsonDataError(_)) {
            if let Some(Ok(axum::Json(v))) = integral_numbers_as_integers(&bytes).map(|b| axum::Json::<T>::from_bytes(&b)) {
                return Ok(ApiJson(v));
            }
        }
        Err(match refused {
            JsonRejection::JsonSyntaxError(e) => AppError::validation("รูปแบบ JSON ไม่ถูกต้อง", format!("malformed JSON: {}", e.body_text())),
            JsonRejection::JsonDataError(e) => {
                AppError::validation(format!("ข้อมูลไม่ตรงตามรูปแบบที่กำหนด ({})", e.body_text()), format!("invalid JSON data: {}", e.body_text()))
            }
            e => AppError::validation("อ่านข้อมูลที่ส่งมาไม่ได้", e.body_text()),
        })
    }
}

/// The media type a request names in `Content-Type`, without its parameters, in lower case (`text/csv` for
/// `Text/CSV; charset=utf-8`); None without one.
pub(crate) fn media_type(headers: &axum::http::HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

/// `Content-Type: application/json`, or a `+json` type.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    media_type(headers).is_some_and(|m| m == "application/json" || (m.starts_with("application/") && m.ends_with("+json")))
}

/// The body again with every number that is a whole number within `i64` written as an integer (`7.0` → `7`,
/// `1.5e3` → `1500`); None when it has none such. Read from the text, not through `f64`: serde_json's float parsing
/// may be off by an ulp (`-1865323079434687.0` read as `…687.25`).
fn integral_numbers_as_integers(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let (mut changed, mut in_string, mut i) = (false, false, 0);
    while i < body.len() {
        let b = body[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < body.len() {
                out.push(body[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < body.len() && matches!(body[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    i += 1;
                }
                match whole_number(&body[start..i]) {
                    Some(integer) => {
                        out.extend_from_slice(integer.as_bytes());
                        changed = true;
                    }
                    None => out.extend_from_slice(&body[start..i]),
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

/// A number token with a fraction or an exponent that is a whole number within `i64`, as an integer.
fn whole_number(token: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(token).ok()?;
    if !text.contains(['.', 'e', 'E']) {
        return None;
    }
    if let Some((whole, fraction)) = text.split_once('.').filter(|(_, f)| !f.contains(['e', 'E'])) {
        return (!fraction.is_empty() && fraction.bytes().all(|b| b == b'0')).then(|| whole.parse::<i64>().ok().map(|n| n.to_string())).flatten();
    }
    // an exponent: Rust's parse is correctly rounded
    let f: f64 = text.parse().ok()?;
    (f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)).then(|| (f as i64).to_string())
}

impl<T: Serialize> IntoResponse for ApiJson<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Path extractor whose rejections (e.g. `/configs/abc` where a number is expected) answer with the error body.
pub(crate) struct ApiPath<T>(pub(crate) T);

impl<T, S> axum::extract::FromRequestParts<S> for ApiPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| ApiPath(v))
            .map_err(|e| AppError::validation("รหัสในที่อยู่ (URL) ไม่ถูกต้อง", e.body_text()))
    }
}

/// Query-string extractor with the error body.
pub(crate) struct ApiQuery<T>(pub(crate) T);

impl<T, S> axum::extract::FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(v)| ApiQuery(v))
            .map_err(|e| AppError::validation("พารามิเตอร์ในที่อยู่ (URL) ไม่ถูกต้อง", e.body_text()))
    }
}

// ---- the one retry loop ----

/// How an operation that failed is tried again: how many more times, and the pause before each try. Every retry of
/// the service takes its policy from here: the counter transaction's lost races ([`Retry::run`] for the
/// administrative writes, [`Retry::pause_before`] in the committers' batch loop, which threads its attempt through
/// a committer and so cannot hand over a closure), the committers' lost connections, the template store and the
/// retention job's audit row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retry {
    /// Tries after the first.
    pub(crate) times: u32,
    pub(crate) pause: Pause,
}

/// The pause before try `n` (from 1) after the first.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pause {
    /// At once.
    None,
    /// A random pause of 1 to `ms × n` ms, so racers part.
    Jitter(u64),
    /// `ms`, then twice that, and so on: a lost connection given time to come back.
    Doubling(u64),
}

impl Retry {
    /// The pause before the next try when `tried` retries have been made already; None when none is left.
    pub(crate) fn pause_before(self, tried: u32) -> Option<std::time::Duration> {
        if tried >= self.times {
            return None;
        }
        let n = u64::from(tried) + 1;
        let ms = match self.pause {
            Pause::None => 0,
            Pause::Jitter(ms) if ms > 0 => rand::Rng::gen_range(&mut rand::thread_rng(), 1..=ms * n),
            Pause::Jitter(_) => 0,
            Pause::Doubling(ms) => ms.saturating_mul(1 << tried.min(16)),
        };
        Some(std::time::Duration::from_millis(ms))
    }

    /// Runs `op` until it succeeds, fails with an error that `retryable` refuses, or has been tried `times` more.
    pub(crate) async fn run<T, F, Fut>(self, retryable: impl Fn(&AppError) -> bool, mut op: F) -> Result<T, AppError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, AppError>>,
    {
        let mut tried = 0;
        loop {
            match op().await {
                Err(e) if retryable(&e) => match self.pause_before(tried) {
                    Some(pause) => {
                        tried += 1;
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                    None => return Err(e),
                },
                other => return other,
            }
        }
    }
}

/// Whether an error is a lost race: a version conflict (the store maps the database's own to it).
pub(crate) fn is_lost_race(e: &AppError) -> bool {
    matches!(e, AppError::VersionConflict(_))
}

// ---- uploads: a body read as text, an import's report as the answer (the bulk import, the reference data) ----

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

// ---- the error answers of the OpenAPI document, derived from the codes an operation can return ----

/// Any request can end in a failure of the service (500; the body carries a reference, never the cause).
pub(crate) const FAILURES: &[ErrorCode] = &[ErrorCode::DbError, ErrorCode::InternalError];
/// A request that needs a caller: none, or an expired one (401); a role, a project or a cross-site cookie that
/// does not allow it (403).
pub(crate) const SIGNED_IN: &[ErrorCode] = &[ErrorCode::Unauthenticated, ErrorCode::Forbidden];
/// A request with a JSON body, a path id or a query string: one that does not read (400), a body over the bound (413).
pub(crate) const INPUT: &[ErrorCode] = &[ErrorCode::ValidationError, ErrorCode::PayloadTooLarge];

/// The OpenAPI `responses` of an operation that can answer `codes`: one per HTTP status, each the error body whose
/// `error` is one of that status's codes, with `Retry-After` where the answer tells a wait.
pub(crate) fn error_responses(
    codes: &[ErrorCode],
) -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
    use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, SchemaType, Type};
    use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, ResponseBuilder};
    let mut by_status: std::collections::BTreeMap<u16, Vec<ErrorCode>> = Default::default();
    for &code in codes {
        let same = by_status.entry(code.http_status()).or_default();
        if !same.contains(&code) {
            same.push(code);
        }
    }
    by_status
        .into_iter()
        .map(|(status, codes)| {
            let names: Vec<&str> = codes.iter().map(|c| c.name()).collect();
            let described: Vec<String> =
                codes.iter().map(|c| if c.code() == c.name() { c.name().to_string() } else { format!("{} {}", c.code(), c.name()) }).collect();
            let schema = AllOfBuilder::new().item(Ref::from_schema_name("ErrorBody")).item(
                ObjectBuilder::new()
                    .property("error", ObjectBuilder::new().schema_type(SchemaType::new(Type::String)).enum_values(Some(names)))
                    .required("error"),
            );
            let reason = StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("error");
            let mut response = ResponseBuilder::new()
                .description(format!("{reason}: {}", described.join(", ")))
                .content("application/json", ContentBuilder::new().schema(Some(schema)).build());
            if codes.iter().any(|c| matches!(c, ErrorCode::RateLimited | ErrorCode::LockTimeout)) {
                response = response.header(
                    "Retry-After",
                    HeaderBuilder::new()
                        .schema(ObjectBuilder::new().schema_type(SchemaType::new(Type::Integer)).minimum(Some(1)))
                        .description(Some("seconds to wait before trying again"))
                        .build(),
                );
            }
            (status.to_string(), response.build().into())
        })
        .collect()
}

/// Declares, once, a set of error codes that operations answer with: a type for `#[utoipa::path(responses(…, Set))]`
/// whose OpenAPI answers [`error_responses`] derives. `error_set!(pub(crate) Name: BASE, OTHER_BASE; Code, Code)`: the base
/// sets (consts of codes) and the set's own codes.
macro_rules! error_set {
    ($(#[$doc:meta])* $vis:vis $name:ident: $($base:ident),* ; $($code:ident),* $(,)?) => {
        $(#[$doc])*
        $vis struct $name;
        impl $name {
            /// Every code of the set.
            pub(crate) fn codes() -> Vec<$crate::contract::ErrorCode> {
                let mut codes: Vec<$crate::contract::ErrorCode> = Vec::new();
                $(codes.extend_from_slice($base);)*
                let own: &[$crate::contract::ErrorCode] = &[$($crate::contract::ErrorCode::$code),*];
                codes.extend_from_slice(own);
                codes
            }
        }
        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
                $crate::server::error::error_responses(&$name::codes())
            }
        }
    };
}
pub(crate) use error_set;

error_set!(
    /// An operation for any signed-in caller with nothing to read: none of input's refusals.
    pub SignedInErrors: FAILURES, SIGNED_IN;
);
error_set!(
    /// A list or search: its filters may not read.
    pub QueryErrors: FAILURES, SIGNED_IN, INPUT;
);
error_set!(
    /// An operation on one object named by its id: it may not exist (or not be the caller's to see).
    pub ByIdErrors: FAILURES, SIGNED_IN, INPUT; NotFound
);
error_set!(
    /// An import (numbers, counters, reference data), besides its 400 with the per-row report ([`ImportRejected`]).
    pub ImportErrors: FAILURES, SIGNED_IN; PayloadTooLarge, ManualOverrideNotAllowed
);
error_set!(
    /// Creating a named object (a user, an API token): the name may be taken, a project it names may not exist.
    pub CreateErrors: FAILURES, SIGNED_IN, INPUT; NotFound, AlreadyExists
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_retry_policy_allows_its_tries_and_pauses_as_it_says() {
        let doubling = Retry { times: 3, pause: Pause::Doubling(100) };
        let pauses: Vec<_> = (0..5).map(|tried| doubling.pause_before(tried)).collect();
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(pauses, vec![ms(100), ms(200), ms(400), None, None]);
        let at_once = Retry { times: 2, pause: Pause::None };
        assert_eq!((0..3).map(|t| at_once.pause_before(t)).collect::<Vec<_>>(), vec![ms(0), ms(0), None]);
        for tried in 0..4 {
            let p = Retry { times: 4, pause: Pause::Jitter(5) }.pause_before(tried).unwrap();
            assert!((1..=5 * (u64::from(tried) + 1)).contains(&(p.as_millis() as u64)), "{p:?} before try {tried}");
        }
    }

    #[tokio::test]
    async fn run_stops_after_its_tries_and_returns_the_last_error() {
        let tries = std::sync::atomic::AtomicU32::new(0);
        let out: Result<(), AppError> = Retry { times: 2, pause: Pause::None }
            .run(is_lost_race, || async {
                tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Err(AppError::VersionConflict("k".into()))
            })
            .await;
        assert!(matches!(out, Err(AppError::VersionConflict(_))));
        assert_eq!(tries.into_inner(), 3, "the first try and two more");
    }

    #[test]
    fn a_database_error_keeps_its_source_but_the_body_shows_only_the_reference() {
        let e = AppError::from(sqlx::Error::RowNotFound);
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(std::error::Error::source(&e).is_some());
        assert!(e.report().contains("no rows returned"), "{}", e.report());
        let body = e.body();
        assert_eq!(body.detail, None);
        assert_eq!(body.reference.as_deref(), e.reference());
        assert!(body.reference.is_some_and(|r| r.starts_with("ERR-")));
        assert!(!body.message.contains("no rows"));
    }

    #[test]
    fn whole_numbers_written_with_a_fraction_read_as_integers() {
        let again = integral_numbers_as_integers(
            br#"{"id": 7.0, "ids": [1, 2.0, 2.5], "nested": {"v": -3.0}, "e": 1.5e3, "big": 1e300, "s": "7.0", "k\"7.0": -1865323079434687.0}"#,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&again).unwrap();
        assert_eq!(v["id"], serde_json::json!(7));
        assert!(v["id"].is_i64());
        assert_eq!(v["ids"], serde_json::json!([1, 2, 2.5]));
        assert!(v["nested"]["v"].is_i64());
        assert_eq!(v["e"], serde_json::json!(1500));
        assert!(v["big"].is_f64(), "beyond i64: left as it was");
        assert_eq!(v["s"], "7.0", "strings are not numbers");
        assert_eq!(v["k\"7.0"], serde_json::json!(-1865323079434687_i64), "exactly, not through f64");
        assert_eq!(integral_numbers_as_integers(br#"{"id": 7, "x": 0.5}"#), None, "nothing to change");
        assert_eq!(integral_numbers_as_integers(b"{"), None);
    }

    #[test]
    fn an_internal_error_reports_its_context_and_cause() {
        let io = std::io::Error::other("disk on fire");
        let e = AppError::internal_from("csv", io);
        assert_eq!(e.code(), ErrorCode::InternalError);
        assert!(e.report().ends_with("csv: disk on fire"), "{}", e.report());
        assert_eq!(e.body().detail, None);
        assert!(std::error::Error::source(&AppError::internal("broken")).is_none());
    }
}
