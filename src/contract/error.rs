//! The error vocabulary shared by the REST API, the server functions and the pages: one [`ErrorCode`] per
//! kind of refusal or failure (docs/rules/api.md#errors), and [`ApiError`], the error a server function returns to the
//! browser. Pages decide by `code`, never by the wording of `message`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::messages::{Lang, Message};

/// Every error the service answers with. The serialised form is the `error` name of the error body;
/// [`ErrorCode::code`] is its `code` (the NB number where docs/rules/api.md#errors gives one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    // docs/rules/api.md#errors, numbered
    ConfigNotFound,
    SequenceExhausted,
    LockTimeout,
    ReservationExpired,
    DuplicateNumber,
    InvalidFormat,
    ManualOverrideNotAllowed,
    // request and access
    VersionConflict,
    ValidationError,
    NotFound,
    Unauthenticated,
    InvalidCredentials,
    Forbidden,
    RateLimited,
    PayloadTooLarge,
    /// A server function called with a body that is not JSON.
    UnsupportedMediaType,
    // conflicts with the state of a counter, number, template or workflow
    AlreadyExists,
    AlreadyConfirmed,
    ReservationCancelled,
    NotConfirmed,
    RevisionExhausted,
    OverrideBelowIssued,
    ResetAlreadyPending,
    ResetAboveLast,
    ResetBelowConfirmed,
    KeyChangeNotAcknowledged,
    CodeImmutable,
    WfInvalidTransition,
    WfVersionConflict,
    /// An `Idempotency-Key` sent again with another request (docs/rules/api.md#idempotency-keys).
    IdempotencyKeyReused,
    /// An `Idempotency-Key` sent again while its first request is still being served.
    IdempotencyInProgress,
    /// The database's head of a counter is behind the head witnessed outside it
    /// (docs/rules/numbering.md#what-is-never-done-twice: a restored backup, a
    /// failover that lost commits): the counter issues nothing until a super admin resumes it past the witness.
    CounterBehindWitness,
    // failures
    DbError,
    InternalError,
    /// The browser could not reach the server or read its answer (never sent by the server).
    NetworkError,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::ConfigNotFound,
        ErrorCode::SequenceExhausted,
        ErrorCode::LockTimeout,
        ErrorCode::ReservationExpired,
        ErrorCode::DuplicateNumber,
        ErrorCode::InvalidFormat,
        ErrorCode::ManualOverrideNotAllowed,
        ErrorCode::VersionConflict,
        ErrorCode::ValidationError,
        ErrorCode::NotFound,
        ErrorCode::Unauthenticated,
        ErrorCode::InvalidCredentials,
        ErrorCode::Forbidden,
        ErrorCode::RateLimited,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::AlreadyExists,
        ErrorCode::AlreadyConfirmed,
        ErrorCode::ReservationCancelled,
        ErrorCode::NotConfirmed,
        ErrorCode::RevisionExhausted,
        ErrorCode::OverrideBelowIssued,
        ErrorCode::ResetAlreadyPending,
        ErrorCode::ResetAboveLast,
        ErrorCode::ResetBelowConfirmed,
        ErrorCode::KeyChangeNotAcknowledged,
        ErrorCode::CodeImmutable,
        ErrorCode::WfInvalidTransition,
        ErrorCode::WfVersionConflict,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::IdempotencyInProgress,
        ErrorCode::CounterBehindWitness,
        ErrorCode::DbError,
        ErrorCode::InternalError,
        ErrorCode::NetworkError,
    ];

    /// The code's place in [`ErrorCode::ALL`]. No wildcard: a new code does not compile until it has a place here
    /// (and the test below holds it to ALL).
    #[cfg(test)]
    fn position(self) -> usize {
        use ErrorCode::*;
        match self {
            ConfigNotFound => 0,
            SequenceExhausted => 1,
            LockTimeout => 2,
            ReservationExpired => 3,
            DuplicateNumber => 4,
            InvalidFormat => 5,
            ManualOverrideNotAllowed => 6,
            VersionConflict => 7,
            ValidationError => 8,
            NotFound => 9,
            Unauthenticated => 10,
            InvalidCredentials => 11,
            Forbidden => 12,
            RateLimited => 13,
            PayloadTooLarge => 14,
            UnsupportedMediaType => 15,
            AlreadyExists => 16,
            AlreadyConfirmed => 17,
            ReservationCancelled => 18,
            NotConfirmed => 19,
            RevisionExhausted => 20,
            OverrideBelowIssued => 21,
            ResetAlreadyPending => 22,
            ResetAboveLast => 23,
            ResetBelowConfirmed => 24,
            KeyChangeNotAcknowledged => 25,
            CodeImmutable => 26,
            WfInvalidTransition => 27,
            WfVersionConflict => 28,
            IdempotencyKeyReused => 29,
            IdempotencyInProgress => 30,
            CounterBehindWitness => 31,
            DbError => 32,
            InternalError => 33,
            NetworkError => 34,
        }
    }

    /// The `code` of the error body: the NB number where docs/rules/api.md#errors gives one, else the name.
    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::ConfigNotFound => "NB001",
            ErrorCode::SequenceExhausted => "NB002",
            ErrorCode::LockTimeout => "NB003",
            ErrorCode::ReservationExpired => "NB004",
            ErrorCode::DuplicateNumber => "NB005",
            ErrorCode::InvalidFormat => "NB006",
            ErrorCode::ManualOverrideNotAllowed => "NB007",
            other => other.name(),
        }
    }

    /// The `error` of the error body (and the serialised form).
    pub fn name(self) -> &'static str {
        use ErrorCode::*;
        match self {
            ConfigNotFound => "CONFIG_NOT_FOUND",
            SequenceExhausted => "SEQUENCE_EXHAUSTED",
            LockTimeout => "LOCK_TIMEOUT",
            ReservationExpired => "RESERVATION_EXPIRED",
            DuplicateNumber => "DUPLICATE_NUMBER",
            InvalidFormat => "INVALID_FORMAT",
            ManualOverrideNotAllowed => "MANUAL_OVERRIDE_NOT_ALLOWED",
            VersionConflict => "VERSION_CONFLICT",
            ValidationError => "VALIDATION_ERROR",
            NotFound => "NOT_FOUND",
            Unauthenticated => "UNAUTHENTICATED",
            InvalidCredentials => "INVALID_CREDENTIALS",
            Forbidden => "FORBIDDEN",
            RateLimited => "RATE_LIMITED",
            PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            AlreadyExists => "ALREADY_EXISTS",
            AlreadyConfirmed => "ALREADY_CONFIRMED",
            ReservationCancelled => "RESERVATION_CANCELLED",
            NotConfirmed => "NOT_CONFIRMED",
            RevisionExhausted => "REVISION_EXHAUSTED",
            OverrideBelowIssued => "OVERRIDE_BELOW_ISSUED",
            ResetAlreadyPending => "RESET_ALREADY_PENDING",
            ResetAboveLast => "RESET_ABOVE_LAST",
            ResetBelowConfirmed => "RESET_BELOW_CONFIRMED",
            KeyChangeNotAcknowledged => "KEY_CHANGE_NOT_ACKNOWLEDGED",
            CodeImmutable => "CODE_IMMUTABLE",
            WfInvalidTransition => "WF_INVALID_TRANSITION",
            WfVersionConflict => "WF_VERSION_CONFLICT",
            IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            IdempotencyInProgress => "IDEMPOTENCY_IN_PROGRESS",
            CounterBehindWitness => "COUNTER_BEHIND_WITNESS",
            DbError => "DB_ERROR",
            InternalError => "INTERNAL_ERROR",
            NetworkError => "NETWORK_ERROR",
        }
    }

    /// The HTTP status this error answers with.
    pub fn http_status(self) -> u16 {
        use ErrorCode::*;
        match self {
            ValidationError | InvalidFormat => 400,
            Unauthenticated | InvalidCredentials => 401,
            Forbidden | ManualOverrideNotAllowed => 403,
            NotFound | ConfigNotFound => 404,
            ReservationExpired => 410,
            PayloadTooLarge => 413,
            UnsupportedMediaType => 415,
            IdempotencyKeyReused => 422,
            RateLimited => 429,
            LockTimeout | NetworkError | CounterBehindWitness => 503,
            DbError | InternalError => 500,
            SequenceExhausted
            | DuplicateNumber
            | VersionConflict
            | AlreadyExists
            | AlreadyConfirmed
            | ReservationCancelled
            | NotConfirmed
            | RevisionExhausted
            | OverrideBelowIssued
            | ResetAlreadyPending
            | ResetAboveLast
            | ResetBelowConfirmed
            | KeyChangeNotAcknowledged
            | CodeImmutable
            | WfInvalidTransition
            | WfVersionConflict
            | IdempotencyInProgress => 409,
        }
    }

    /// Worth trying again as it is (busy, or the network): the UI offers a retry.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorCode::LockTimeout | ErrorCode::NetworkError | ErrorCode::RateLimited | ErrorCode::IdempotencyInProgress)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// The error of a server function, as the browser receives it: the code to decide by, and the Thai
/// message of docs/rules/api.md#errors to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub code: ErrorCode,
    /// The Thai message of docs/rules/api.md#errors.
    pub message: String,
    /// The reference id of a server failure, for the administrator (`ERR-…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into(), reference: None, retry_after: None }
    }
}

/// What a person reads: the message, the NB code where docs/rules/api.md#errors numbers it, the reference of a failure.
impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if self.code.code().starts_with("NB") {
            write!(f, " ({})", self.code.code())?;
        }
        if let Some(r) = &self.reference {
            write!(f, " [อ้างอิง {r}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl leptos::server_fn::error::FromServerFnError for ApiError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    /// The framework's own failures: arguments that do not decode are the caller's mistake (400); a request
    /// that never arrived or an answer that cannot be read is the network's.
    fn from_server_fn_error(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        use leptos::server_fn::error::ServerFnErrorErr as E;
        let said = |m: Message, detail: &str| m.render(Lang::Th, &[("detail", detail)]);
        match value {
            E::Args(m) | E::MissingArg(m) => ApiError::new(ErrorCode::ValidationError, said(Message::BadArguments, &m)),
            E::Request(m) | E::Response(m) | E::Deserialization(m) => ApiError::new(ErrorCode::NetworkError, said(Message::Unreachable, &m)),
            other => ApiError::new(ErrorCode::InternalError, said(Message::FrameworkFailure, &other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_code_once_in_place() {
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(code.position(), i, "{code:?}");
        }
        let names: std::collections::BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn codes_serialise_as_their_names_and_answer_their_status() {
        assert_eq!(serde_json::to_string(&ErrorCode::KeyChangeNotAcknowledged).unwrap(), "\"KEY_CHANGE_NOT_ACKNOWLEDGED\"");
        assert_eq!(serde_json::from_str::<ErrorCode>("\"LOCK_TIMEOUT\"").unwrap(), ErrorCode::LockTimeout);
        assert_eq!(ErrorCode::LockTimeout.code(), "NB003");
        assert_eq!(ErrorCode::LockTimeout.name(), "LOCK_TIMEOUT");
        assert_eq!(ErrorCode::ResetAboveLast.code(), "RESET_ABOVE_LAST");
        assert_eq!(ErrorCode::ReservationExpired.http_status(), 410);
        assert_eq!(ErrorCode::KeyChangeNotAcknowledged.http_status(), 409);
    }

    #[test]
    fn an_api_error_round_trips_and_reads_like_the_rest_message() {
        let e = ApiError {
            code: ErrorCode::LockTimeout, message: "ระบบกำลังยุ่ง".into(), reference: None, retry_after: Some(1)
        };
        let back: ApiError = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
        assert_eq!(e.to_string(), "ระบบกำลังยุ่ง (NB003)");
        let failed = ApiError { reference: Some("ERR-1".into()), ..ApiError::new(ErrorCode::DbError, "ขัดข้อง") };
        assert_eq!(failed.to_string(), "ขัดข้อง [อ้างอิง ERR-1]");
    }
}
