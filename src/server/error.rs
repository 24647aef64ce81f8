//! The one application error type: every failure of the engine, storage and access layers ends here,
//! and is mapped once to an HTTP status, an NB code and the Thai message of docs/rules/api.md#errors.
//! Beside it: the extractors whose rejections answer with it (`extract`), the one retry loop (`retry`), uploads read
//! as text (`upload`) and the error answers of the OpenAPI document (`openapi`).

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::contract::messages::Detail;
pub(crate) use crate::contract::ErrorCode;
use crate::contract::{ApiError, Lang, Message};
use crate::numbering::CounterId;

mod extract;
mod openapi;
mod retry;
mod upload;

pub(crate) use extract::{media_type, page_lang, ApiJson, ApiPath, ApiQuery};
pub(crate) use openapi::*;
pub(crate) use retry::{is_lost_race, Pause, Retry};
pub(crate) use upload::{body_text, report_response, ImportRejected};

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
    BehindWitness { key: String, counter_id: CounterId, stored: i64, witnessed: i64, witnessed_last: i64 },
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
    /// The message in English, for a caller that asks for it (absent from a holder that predates it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message_en: Option<String>,
}

impl From<&AppError> for RemoteError {
    fn from(e: &AppError) -> RemoteError {
        RemoteError { answer: ApiError::from(e), en: e.to_string(), message_en: Some(e.message(Lang::En)) }
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
    /// The request's data is not valid: `detail` says which and why (`VALIDATION_ERROR`).
    pub(crate) fn validation(detail: impl Detail) -> Self {
        let (th, en) = detail.both();
        AppError::Validation { th, en }
    }
    /// `detail` names what was not found (`NOT_FOUND`).
    pub(crate) fn not_found(detail: impl Detail) -> Self {
        let (th, en) = detail.both();
        AppError::NotFound { th, en }
    }
    /// A document number that does not read (`INVALID_FORMAT`).
    pub(crate) fn invalid_format(detail: impl Detail) -> Self {
        let (th, en) = detail.both();
        AppError::InvalidFormat { th, en }
    }
    /// A refusal by a rule, said whole by `detail`, under `code`.
    pub(crate) fn conflict(code: ErrorCode, detail: impl Detail) -> Self {
        let (th, en) = detail.both();
        AppError::Conflict { code, th, en }
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
        self.message(Lang::Th)
    }

    /// The message in `lang`, from the catalogue (`contract::messages`) with this error's arguments.
    pub(crate) fn message(&self, lang: Lang) -> String {
        use AppError::*;
        let in_lang = |th: &str, en: &str| if lang == Lang::Th { th.to_string() } else { en.to_string() };
        let detailed = |m: Message, th: &str, en: &str| m.render(lang, &[("detail", &in_lang(th, en))]);
        match self {
            InvalidFormat { th, en } => detailed(Message::InvalidFormat, th, en),
            Validation { th, en } => detailed(Message::Validation, th, en),
            NotFound { th, en } => detailed(Message::NotFound, th, en),
            Conflict { th, en, .. } => detailed(Message::Conflict, th, en),
            WrongCurrentPassword => Message::WrongCurrentPassword.render(lang, &[]),
            RateLimited { scope, retry_after_secs } if scope.starts_with("login") => {
                Message::LoginRateLimited.render(lang, &[("seconds", &retry_after_secs.to_string())])
            }
            RateLimited { scope: "events", .. } => Message::EventsRateLimited.render(lang, &[]),
            CrossOrigin(_) => Message::CrossOrigin.render(lang, &[]),
            BehindWitness { counter_id, witnessed_last, .. } => {
                Message::BehindWitness.render(lang, &[("counter", &counter_id.to_string()), ("last", &witnessed_last.to_string())])
            }
            Remote(r) => match lang {
                Lang::Th => r.answer.message.clone(),
                Lang::En => r.message_en.clone().unwrap_or_else(|| Message::Code(r.answer.code).render(lang, &[])),
            },
            other => Message::Code(other.code()).render(lang, &[]),
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

    /// The error body in Thai.
    pub(crate) fn body(&self) -> ErrorBody {
        self.body_in(Lang::Th)
    }

    /// The error body, its message in `lang`.
    pub(crate) fn body_in(&self, lang: Lang) -> ErrorBody {
        let (status, code) = (self.status(), self.code());
        let detail = match code {
            ErrorCode::DbError | ErrorCode::InternalError => None, // never leak internals (a lock holder's neither)
            _ => Some(self.to_string()),
        };
        ErrorBody {
            status_code: status.as_u16(),
            code: code.code().to_string(),
            error: code.name().to_string(),
            message: self.message(lang),
            reference: self.reference().map(str::to_string),
            retry_after: self.retry_after(),
            detail,
        }
    }
}

impl AppError {
    /// The error as a page reads it, its message in `lang`.
    pub(crate) fn api_error(&self, lang: Lang) -> ApiError {
        ApiError { code: self.code(), message: self.message(lang), reference: self.reference().map(str::to_string), retry_after: self.retry_after() }
    }
}

impl From<&AppError> for ApiError {
    fn from(e: &AppError) -> ApiError {
        e.api_error(Lang::Th)
    }
}

tokio::task_local! {
    /// The language the request being served asked for (`Accept-Language`), for its error bodies.
    static ANSWER_LANG: Lang;
}

/// Serves a request with its error bodies in the language of its `Accept-Language` (Thai unless it prefers English).
pub(crate) async fn answer_in_callers_language(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let lang = callers_lang(request.headers());
    ANSWER_LANG.scope(lang, next.run(request)).await
}

/// The language a request's `Accept-Language` prefers among Thai and English: what an API answer is said in.
pub(crate) fn callers_lang(headers: &axum::http::HeaderMap) -> Lang {
    headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).map(Lang::negotiate).unwrap_or_default()
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self.report(), "request failed");
        }
        let lang = ANSWER_LANG.try_with(|l| *l).unwrap_or_default();
        let mut response = (status, [(header::CONTENT_LANGUAGE, lang.code())], axum::Json(self.body_in(lang))).into_response();
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

/// The most characters of a caller's own text an answer echoes back.
pub(crate) const ECHO_CHARS: usize = 60;

/// A caller's text as an answer may name it: at most [`ECHO_CHARS`] characters, so an oversize input is never sent back
/// whole (into a message, a log, a report).
pub(crate) fn echo(text: &str) -> String {
    text.chars().take(ECHO_CHARS).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_internal_error_reports_its_context_and_cause() {
        let io = std::io::Error::other("disk on fire");
        let e = AppError::internal_from("csv", io);
        assert_eq!(e.code(), ErrorCode::InternalError);
        assert!(e.report().ends_with("csv: disk on fire"), "{}", e.report());
        assert_eq!(e.body().detail, None);
        assert!(std::error::Error::source(&AppError::internal("broken")).is_none());
    }
}
