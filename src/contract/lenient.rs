//! Lenient reading of the numbering request's fields (docs/rules/api.md#the-request-body-and-its-leniency): a DMS
//! backend may send an id or a sub-type
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
pub fn id<'de, D: Deserializer<'de>, Id: From<i64>>(d: D) -> Result<Option<Id>, D::Error> {
    Ok(integer::<D, i64>(d, "an id (a number or a numeric string)")?.map(Id::from))
}

/// A month (1–12): a number or a numeric string, a whole number written with a fraction (`11.0`) too.
pub fn month<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let month = match &value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::Number(n)) => n.as_f64().filter(|f| f.fract() == 0.0 && (1.0..=12.0).contains(f)).map(|f| f as u32),
        Some(Value::String(s)) => s.trim().parse::<u32>().ok().filter(|m| (1..=12).contains(m)),
        Some(_) => None,
    };
    month.map(Some).ok_or_else(|| expected("a month (1–12)", value.as_ref().unwrap_or(&Value::Null)))
}

/// A year: a number or a numeric string, 0–9999.
pub fn year<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    match integer::<D, i32>(d, "a year (a number or a numeric string)")? {
        Some(y) if !(0..=9999).contains(&y) => Err(serde::de::Error::custom(format!("expected a year (0–9999), found {y}"))),
        y => Ok(y),
    }
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
    use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat, SchemaType, Type};
    use utoipa::openapi::{RefOr, Schema};

    fn null() -> ObjectBuilder {
        ObjectBuilder::new().schema_type(Type::Null)
    }

    /// An id: an integer, or a string of digits; blank or null = absent.
    pub fn integer_or_digits() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))))
            .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(format!("^{TRIMMED}*(0*[0-9]{{1,18}})?{TRIMMED}*$"))))
            .item(null())
            .description(Some("a number, or the same number as a string (\"21\" and 21 are the same)"))
            .into()
    }

    /// An id that must be there: an integer, or a string of digits.
    fn given_id() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))))
            .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(format!("^{TRIMMED}*0*[0-9]{{1,18}}{TRIMMED}*$"))))
            .into()
    }

    /// A year, A.D. or B.E. (0–9999): an integer, or a string of digits; blank or null = absent.
    pub fn year() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)).maximum(Some(9999)))
            .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(format!("^{TRIMMED}*(0*[0-9]{{1,4}})?{TRIMMED}*$"))))
            .item(null())
            .description(Some("the current year (A.D. or B.E.); with backdateReason, the earlier closed year to continue"))
            .into()
    }

    /// A code: trimmed and NFC-normalised; blank or null = absent.
    fn optional_code() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null])).into()
    }

    /// A code that must be there: not blank.
    fn given_code() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(KEPT)).into()
    }

    /// `{part}Id` or `{part}Code` given (or both).
    fn named(id: &str, code: &str) -> RefOr<Schema> {
        named_by(id, given_id(), code, given_code())
    }

    /// `id` or `code` given (or both), each as its schema says.
    pub fn named_by(id: &str, id_schema: RefOr<Schema>, code: &str, code_schema: RefOr<Schema>) -> RefOr<Schema> {
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(ObjectBuilder::new().property(id, id_schema).required(id))
            .item(ObjectBuilder::new().property(code, code_schema).required(code))
            .into()
    }

    /// A body that names its project and correspondence type by id (an integer) or by code (a string), as `body` says.
    pub fn naming_project_and_type(body: RefOr<Schema>) -> RefOr<Schema> {
        let id = || ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))).into();
        let code = || ObjectBuilder::new().schema_type(Type::String).into();
        utoipa::openapi::schema::AllOfBuilder::new()
            .item(body)
            .item(named_by("projectId", id(), "projectCode", code()))
            .item(named_by("correspondenceTypeId", id(), "correspondenceTypeCode", code()))
            .into()
    }

    /// The numbering request in either shape: flat ([`number_request`]) or wrapped as the DMS documents it:
    /// `{"counterKey": {projectId, originatorOrgId, recipientOrgId, correspondenceTypeId, subTypeId, rfaTypeId,
    /// disciplineId, contractId, year}}`, an absent part as `0`.
    pub fn any_number_request() -> RefOr<Schema> {
        let mut key = ObjectBuilder::new();
        for id in ["projectId", "originatorOrgId", "recipientOrgId", "correspondenceTypeId", "subTypeId", "rfaTypeId", "disciplineId", "contractId"] {
            key = key.property(id, integer_or_digits());
        }
        let key = key
            .property("year", year())
            .required("projectId")
            .required("correspondenceTypeId")
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)))
            .description(Some("the seeds' counter key: ids, 0 for a part that is absent"));
        let seed = ObjectBuilder::new()
            .property("counterKey", key)
            .required("counterKey")
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
        OneOfBuilder::new().item(number_request()).item(seed).into()
    }

    /// The numbering request (docs/rules/api.md#the-request-body-and-its-leniency): each part by id or by code; the
    /// project and the correspondence type must be
    /// named, the other parts where the template shows them (a missing one is a 400 naming it).
    pub fn number_request() -> RefOr<Schema> {
        number_request_with(ObjectBuilder::new(), "each part by id or by code (ids as numbers or numeric strings)")
    }

    /// The body of `reserve-block`: the numbering request, and the block's count, hold and holder.
    pub fn block_request() -> RefOr<Schema> {
        let object = ObjectBuilder::new()
            .property("count", ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(2)).maximum(Some(500)))
            .required("count")
            .property(
                "holdUntil",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::DateTime)))
                    .description(Some("RFC 3339; in the future, at most 30 days away; absent: the reservation TTL")),
            )
            .property(
                "holder",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .max_length(Some(200))
                    .description(Some("whom the block is for (a site office, a subcontractor)")),
            );
        number_request_with(object, "a numbering request (each part by id or by code) and the block: 2–500 contiguous numbers")
    }

    fn number_request_with(mut object: ObjectBuilder, description: &str) -> RefOr<Schema> {
        for (id, code) in [
            ("projectId", "projectCode"),
            ("correspondenceTypeId", "correspondenceTypeCode"),
            ("originatorOrgId", "originatorCode"),
            ("recipientOrgId", "recipientCode"),
            ("rfaTypeId", "rfaTypeCode"),
            ("disciplineId", "disciplineCode"),
            ("contractId", "contractCode"),
        ] {
            object = object.property(id, integer_or_digits()).property(code, optional_code());
        }
        let object = object
            .property("subTypeId", integer_or_digits())
            .property("subTypeNumber", number_or_text())
            .property(
                "revision",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .pattern(Some(format!("^{TRIMMED}*([A-Za-z]{{1,{}}})?{TRIMMED}*$", crate::numbering::revision::MAX_REV_LEN)))
                    .description(Some("revision label A–Z, AA…ZZZ (any case); absent: A")),
            )
            .property("recipients", addressees())
            .property("year", year())
            .property(
                "backdateReason",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .max_length(Some(500))
                    .description(Some("super admins: take the next number of the earlier (closed) year `year` names, for this reason")),
            )
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
        utoipa::openapi::schema::AllOfBuilder::new()
            .item(object)
            // the project, or an originator that belongs to exactly one active project (the service derives it)
            .item(
                utoipa::openapi::schema::AnyOfBuilder::new().item(named("projectId", "projectCode")).item(named("originatorOrgId", "originatorCode")),
            )
            .item(named("correspondenceTypeId", "correspondenceTypeCode"))
            .description(Some(description))
            .into()
    }

    /// The document's addressees: each an organisation by id or by code, `TO` or `CC`, with an optional sort order.
    fn addressees() -> RefOr<Schema> {
        let addressee = ObjectBuilder::new()
            .property("organizationId", integer_or_digits())
            .property("organizationCode", optional_code())
            .property(
                "recipientType",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .pattern(Some(format!("^{TRIMMED}*(([Tt][Oo])|([Cc][Cc]))?{TRIMMED}*$")))
                    .description(Some("TO (when absent) or CC, any case")),
            )
            .property("sortOrder", integer_or_digits())
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(utoipa::openapi::schema::AllOfBuilder::new().item(addressee).item(named("organizationId", "organizationCode")))
            .max_items(Some(crate::contract::MAX_ADDRESSEES))
            .description(Some("the document's addressees; the first TO by sort order is the main recipient ({RECIPIENT})"))
            .into()
    }

    /// What `str::trim` removes at either end (Unicode White_Space); Python's and ECMAScript's `\s` also take
    /// U+001C–U+001F, which `trim` keeps.
    pub(crate) const TRIMMED: &str = r"[^\S\x1c-\x1f]";
    /// A character `trim` keeps at an end.
    const KEPT: &str = r"[\S\x1c-\x1f]";
    /// Not a control character (`char::is_control`: U+0000–U+001F, U+007F–U+009F).
    pub(crate) const NO_CONTROL: &str = r"[^\x00-\x1f\x7f-\x9f]";
    /// Neither white space nor a control character.
    const VISIBLE: &str = r"[^\s\x00-\x1f\x7f-\x9f]";

    /// Text the server trims and then counts: `min..=max` characters (`min` 0: may be empty), each of `inner` between
    /// two `ends`.
    fn trimmed(min: usize, max: usize, ends: &str, inner: &str) -> String {
        let core = match min {
            0 => format!("({ends}({inner}{{0,{}}}{ends})?)?", max - 2),
            1 => format!("{ends}({inner}{{0,{}}}{ends})?", max - 2),
            _ => format!("{ends}{inner}{{{},{}}}{ends}", min - 2, max - 2),
        };
        format!("^{TRIMMED}*{core}{TRIMMED}*$")
    }

    pub(crate) fn text(pattern: String, nullable: bool, description: &str) -> RefOr<Schema> {
        let kind = if nullable { SchemaType::from_iter([Type::String, Type::Null]) } else { SchemaType::new(Type::String) };
        ObjectBuilder::new().schema_type(kind).pattern(Some(pattern)).description(Some(description)).into()
    }

    /// A reason of at least `min` characters (trimmed), at most 500.
    pub fn reason_of_at_least(min: usize) -> RefOr<Schema> {
        text(trimmed(min, 500, KEPT, r"[\s\S]"), false, &format!("at least {min} characters, at most 500 (trimmed)"))
    }

    /// A reason that must be given: 1–500 characters (trimmed).
    pub fn reason() -> RefOr<Schema> {
        text(trimmed(1, 500, KEPT, r"[\s\S]"), false, "1–500 characters (trimmed)")
    }

    /// A reason or comment that may be left out: at most 500 characters (trimmed).
    pub fn optional_reason() -> RefOr<Schema> {
        text(trimmed(0, 500, KEPT, r"[\s\S]"), true, "at most 500 characters (trimmed)")
    }

    /// A document number named to an admin operation: 1–100 characters (trimmed).
    pub fn document_number() -> RefOr<Schema> {
        text(trimmed(1, crate::numbering::MAX_NUMBER_LEN, KEPT, r"[\s\S]"), false, "1–100 characters (trimmed)")
    }

    /// A document id: 1–100 characters (trimmed), no control characters.
    pub fn document_id() -> RefOr<Schema> {
        text(trimmed(1, crate::numbering::MAX_DOCUMENT_ID_CHARS, VISIBLE, NO_CONTROL), false, "1–100 characters (trimmed), no control characters")
    }

    /// A document id that may be left out.
    pub fn optional_document_id() -> RefOr<Schema> {
        text(trimmed(1, crate::numbering::MAX_DOCUMENT_ID_CHARS, VISIBLE, NO_CONTROL), true, "1–100 characters (trimmed), no control characters")
    }

    /// A name: 1–`max` characters (trimmed), no control characters.
    pub fn name(max: usize) -> String {
        trimmed(1, max, VISIBLE, NO_CONTROL)
    }

    /// An API token's name: 1–100 characters (trimmed), no control characters.
    pub fn token_name() -> RefOr<Schema> {
        text(name(100), false, "1–100 characters (trimmed), no control characters")
    }

    /// A user's display name: at most 200 characters (trimmed), no control characters; empty or absent: the username.
    pub fn display_name() -> RefOr<Schema> {
        text(trimmed(0, 200, VISIBLE, NO_CONTROL), true, "at most 200 characters (trimmed), no control characters; empty: the username")
    }

    /// A username: 1–50 characters (trimmed), no white space or control characters.
    pub fn username() -> RefOr<Schema> {
        text(format!("^{TRIMMED}*{VISIBLE}{{1,50}}{TRIMMED}*$"), false, "1–50 characters (trimmed), no white space")
    }

    /// A reservation token, as `reserve` answered it.
    pub fn reservation_token() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::Custom("uuid".into())))
            .pattern(Some(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"))
            .into()
    }

    /// A reference-data code (docs/rules/numbering.md#reference-data-and-codes): 1–20 characters (trimmed), no white
    /// space, control characters, `/`, `{`, `}`,
    /// and (except a project's) no `-`.
    pub fn reference_code(project: bool) -> RefOr<Schema> {
        let dash = if project { "" } else { "-" };
        text(
            format!(r"^{TRIMMED}*[^\s\x00-\x1f\x7f-\x9f/{{}}{dash}]{{1,{}}}{TRIMMED}*$", crate::numbering::MAX_CODE_LEN),
            false,
            "1–20 characters (trimmed): no white space, control characters, '/', '{' or '}' (nor '-', except a project's)",
        )
    }

    /// A project's code.
    pub fn project_code() -> RefOr<Schema> {
        reference_code(true)
    }

    /// Any other reference code.
    pub fn party_code() -> RefOr<Schema> {
        reference_code(false)
    }

    /// A reference item's name: 1–200 characters (trimmed), no control characters.
    pub fn item_name() -> RefOr<Schema> {
        text(name(200), false, "1–200 characters (trimmed), no control characters")
    }

    /// One of `words`, in any ASCII case, trimmed.
    fn any_case(words: &[&str]) -> String {
        format!("^{TRIMMED}*{}{TRIMMED}*$", any_case_group(words))
    }

    /// `(WORD|…)` with each letter in either case.
    fn any_case_group(words: &[&str]) -> String {
        let alternatives: Vec<String> = words
            .iter()
            .map(|w| {
                w.chars()
                    .map(|c| if c.is_ascii_alphabetic() { format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()) } else { c.to_string() })
                    .collect()
            })
            .collect();
        format!("({})", alternatives.join("|"))
    }

    /// A webhook delivery's state: PENDING, DELIVERED or FAILED (any case); blank: every state.
    /// A counter's period as the service writes it (`YEAR_2026`, `MONTH_2026_01`, `FY_2570`, `NONE`, `CONTRACT_12`).
    pub fn period_key() -> RefOr<Schema> {
        text(
            "^(YEAR_[1-9][0-9]{3}|MONTH_[1-9][0-9]{3}_(0[1-9]|1[0-2])|FY_[1-9][0-9]{3}|NONE|CONTRACT_[1-9][0-9]{0,18})$".to_string(),
            true,
            "YEAR_yyyy, MONTH_yyyy_mm, FY_bbbb (B.E.), NONE or CONTRACT_<contract id>",
        )
    }

    /// A register's format: csv or xlsx (any case); blank: csv.
    pub fn register_format() -> RefOr<Schema> {
        text(format!("^{TRIMMED}*{}?{TRIMMED}*$", any_case_group(&["CSV", "XLSX"])), true, "csv (default) or xlsx, any case")
    }

    pub fn delivery_state() -> RefOr<Schema> {
        let states = any_case_group(&["PENDING", "DELIVERED", "FAILED"]);
        text(format!("^{TRIMMED}*{states}?{TRIMMED}*$"), false, "PENDING, DELIVERED or FAILED (any case); blank: every state")
    }

    /// An organization's role: OWNER, CONSULTANT, CONTRACTOR or OTHER (any case).
    pub fn org_role() -> RefOr<Schema> {
        text(any_case(&["OWNER", "CONSULTANT", "CONTRACTOR", "OTHER"]), false, "OWNER, CONSULTANT, CONTRACTOR or OTHER")
    }

    /// A sub-type number: 1–5 digits (trimmed).
    pub fn sub_type_number() -> RefOr<Schema> {
        text(format!("^{TRIMMED}*[0-9]{{1,5}}{TRIMMED}*$"), false, "1–5 digits")
    }

    /// The size of a page a client asks for: any `u32` (the server serves at most its own largest page).
    pub fn page_size() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)).maximum(Some(u32::MAX)))
            .item(null())
            .description(Some("rows a page; at most the listing's own largest page is served"))
            .into()
    }

    /// Ids of stored things (projects): integers from 1.
    pub fn ids() -> RefOr<Schema> {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(ObjectBuilder::new().schema_type(Type::Integer).format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))).minimum(Some(1)))
            .into()
    }

    /// A sub-type number: an integer or text.
    pub fn number_or_text() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)).maximum(Some(utoipa::Number::UInt(u64::MAX as usize))))
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
