//! Lenient reading of the numbering request's fields (SPEC §9): a DMS backend may send an id or a sub-type
//! number as a JSON number or as a numeric string, and codes with stray spaces or in another Unicode form.
//! Each reader gives the same value either way, or a clear error naming what it expected.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

fn expected<E: serde::de::Error>(what: &str, found: &Value) -> E {
    let mut shown = found.to_string();
    if shown.chars().count() > 40 {
        shown = shown.chars().take(40).collect::<String>() + "…";
    }
    E::custom(format!("expected {what}, found {shown}"))
}

/// Text trimmed and NFC-normalised; `None` when empty.
fn clean(text: &str) -> Option<String> {
    let text: String = text.trim().nfc().collect();
    (!text.is_empty()).then_some(text)
}

/// An integer field: a JSON integer, or a string of digits (spaces around them allowed); empty or null = absent.
fn integer<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D, what: &str) -> Result<Option<T>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let number = match &value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => match s.trim() {
            "" => return Ok(None),
            digits if digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse::<i64>().ok(),
            _ => None,
        },
        Some(_) => None,
    };
    number.and_then(|n| T::try_from(n).ok()).map(Some).ok_or_else(|| expected(what, value.as_ref().unwrap_or(&Value::Null)))
}

/// An id (`projectId`, `…Id`): a number or a numeric string.
pub fn id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    integer(d, "an id (a number or a numeric string)")
}

/// A year: a number or a numeric string.
pub fn year<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    integer(d, "a year (a number or a numeric string)")
}

/// A code (`projectCode`, `…Code`, `revision`): trimmed and NFC-normalised; empty = absent.
pub fn code<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.as_deref().and_then(clean))
}

/// A number written as text (`subTypeNumber`): a JSON integer or a string, trimmed and NFC-normalised.
pub fn number_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    match &value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(clean(s)),
        Some(Value::Number(n)) if n.is_u64() => Ok(Some(n.to_string())),
        Some(other) => Err(expected("a number or a numeric string", other)),
    }
}

/// The OpenAPI schemas of these fields (the server's document; the browser bundle has no utoipa).
#[cfg(feature = "ssr")]
pub mod schema {
    use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat, Type};
    use utoipa::openapi::{RefOr, Schema};

    fn null() -> ObjectBuilder {
        ObjectBuilder::new().schema_type(Type::Null)
    }

    /// An id or a year: an integer, or a string of digits.
    pub fn integer_or_digits() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))))
            .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^\s*[0-9]{1,18}\s*$")))
            .item(null())
            .description(Some("a number, or the same number as a string (\"21\" and 21 are the same)"))
            .into()
    }

    /// A sub-type number: an integer or text.
    pub fn number_or_text() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)))
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(null())
            .description(Some("a number or text; trimmed and NFC-normalised"))
            .into()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Fields {
        #[serde(default, deserialize_with = "super::id")]
        id: Option<i64>,
        #[serde(default, deserialize_with = "super::year")]
        year: Option<i32>,
        #[serde(default, deserialize_with = "super::code")]
        code: Option<String>,
        #[serde(default, deserialize_with = "super::number_text")]
        number: Option<String>,
    }

    fn read(v: serde_json::Value) -> Result<Fields, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_and_numeric_strings_read_the_same() {
        let a = read(json!({ "id": 7, "year": 2568, "number": 21 })).unwrap();
        let b = read(json!({ "id": " 7 ", "year": "2568", "number": " 21 " })).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.id, a.year, a.number.as_deref()), (Some(7), Some(2568), Some("21")));
    }

    #[test]
    fn absent_null_and_empty_are_none() {
        assert_eq!(read(json!({})).unwrap(), Fields { id: None, year: None, code: None, number: None });
        assert_eq!(
            read(json!({ "id": null, "year": "", "code": "  ", "number": null })).unwrap(),
            Fields { id: None, year: None, code: None, number: None }
        );
    }

    #[test]
    fn codes_are_trimmed_and_nfc_normalised() {
        // "ผรม.1" is the same in NFC; "é" decomposed (e + U+0301) becomes one code point
        let f = read(json!({ "code": "  e\u{301}X " })).unwrap();
        assert_eq!(f.code.as_deref(), Some("\u{e9}X"));
    }

    #[test]
    fn anything_else_is_refused_with_what_was_expected() {
        for bad in
            [json!({ "id": "7a" }), json!({ "id": 1.5 }), json!({ "id": true }), json!({ "id": "-3" }), json!({ "id": [1] }), json!({ "number": -1 })]
        {
            let e = read(bad.clone()).unwrap_err();
            assert!(e.contains("expected"), "{bad}: {e}");
        }
        // out of range: a year beyond i32, an id beyond i64
        assert!(read(json!({ "year": 3_000_000_000i64 })).unwrap_err().contains("expected a year"));
        assert!(read(json!({ "id": "99999999999999999999" })).unwrap_err().contains("expected an id"));
    }
}
