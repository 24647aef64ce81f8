//! The error answers of the OpenAPI document, derived from the codes an operation can return.

use axum::http::StatusCode;

use super::ErrorCode;

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
