//! Extractors whose rejections answer with the error body instead of axum's plain-text defaults.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::AppError;
use crate::contract::messages::RequestDetail;

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
            return Err(AppError::validation(RequestDetail::NotJson));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                AppError::PayloadTooLarge
            } else {
                AppError::validation(RequestDetail::Unreadable { reason: &e.body_text() })
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
            JsonRejection::JsonSyntaxError(e) => AppError::validation(RequestDetail::MalformedJson { reason: &e.body_text() }),
            JsonRejection::JsonDataError(e) => AppError::validation(RequestDetail::JsonShape { reason: &e.body_text() }),
            e => AppError::validation(RequestDetail::Unreadable { reason: &e.body_text() }),
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
            .map_err(|e| AppError::validation(RequestDetail::PathValue { reason: &e.body_text() }))
    }
}

/// The language of the page a request comes from (its `docnum_lang` cookie): what its refusals are said in.
pub(crate) fn page_lang(headers: &axum::http::HeaderMap) -> crate::contract::Lang {
    crate::contract::Lang::from_cookie_headers(headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()))
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
            .map_err(|e| AppError::validation(RequestDetail::QueryValue { reason: &e.body_text() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
