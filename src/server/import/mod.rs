//! Bulk import of counters and legacy numbers (docs/rules/numbering.md#the-lifecycle-of-a-number "bulk import"; super admins): JSON or CSV rows, a
//! dry-run report (per row: ok, or the Thai reason), then all or nothing in ONE write transaction.
//!
//! A row is either a legacy number (`documentNumber`, read with the template of its project and type: the parts
//! and the period it shows select its counter, created when missing) or a counter value (`value` for the counter
//! of the given parts and year/month). Each row is applied with `admin_ops::apply_override` — exactly what the
//! single manual override does, with the same audit rows — inside the one transaction; a dry run does the same
//! and rolls back, so its report sees what the database would say (duplicates, numbers already issued, rows of
//! the same file that collide). Any refused row rolls the whole import back.

pub(crate) mod http;

use chrono::{TimeZone, Utc};
use serde::Deserialize;
use serde_json::{json, Value};
use unicode_normalization::UnicodeNormalization;

use crate::contract::import::{ImportFormat, ImportReport, ImportRowReport};
use crate::contract::messages::{AdminDetail, Detail, ImportDetail};
use crate::contract::{Lang, NumberRequest};
use crate::numbering::Template;
use crate::server::admin_ops::{self, store as astore, AdminOp, Override, OverrideResult};
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::Caller;
use crate::server::db::Tx;
use crate::server::error::{echo, AppError};
use crate::server::numbering::Engine;
use crate::server::numbering::{counter_tx, resolve};
use crate::server::reference::Snapshot;
use crate::server::templates;

/// Most rows one import takes.
pub(crate) const MAX_ROWS: usize = 10_000;
/// Largest import text (JSON or CSV), in bytes.
pub(crate) const MAX_BYTES: usize = 2 * 1024 * 1024;
/// Most sequences one import may pass over in total (each gets an audit row, docs/rules/numbering.md#what-is-never-done-twice: no unexplained gap).
pub(crate) const MAX_TOTAL_SKIPPED: i64 = 200_000;

/// The columns of a row (JSON keys and CSV header names alike).
pub(crate) const COLUMNS: &[&str] = &[
    "projectCode",
    "correspondenceTypeCode",
    "documentNumber",
    "documentId",
    "originatorCode",
    "recipientCode",
    "subTypeNumber",
    "rfaTypeCode",
    "disciplineCode",
    "contractCode",
    "year",
    "month",
    "value",
];

/// One row as given. Numbers are read leniently (JSON numbers or strings, CSV text) so that a wrong value is
/// reported on its row, not as a failure of the whole file.
#[derive(Clone, Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RowInput {
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) project_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) correspondence_type_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) document_number: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) document_id: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) originator_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) recipient_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) sub_type_number: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) rfa_type_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) discipline_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) contract_code: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) year: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) month: Option<String>,
    #[serde(default, deserialize_with = "text_or_number")]
    #[schema(schema_with = text_or_number_schema)]
    pub(crate) value: Option<String>,
}

/// A cell of a row: text or a number (read as its text); blank or null = empty.
fn text_or_number_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Number, Type::Null])).into()
}

fn text_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(serde::de::Error::custom(format!("expected text or a number, found {other}"))),
    }
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty()))
}

/// A row read from the text, or why it could not be read.
type ReadRow = Result<RowInput, AppError>;

/// Reads the rows of a JSON document: `[row, …]` or `{"reason"?, "rows": [row, …]}`. Returns the rows and the
/// document's reason. A syntax error, a wrong shape or too many rows fails the whole text (400).
pub(crate) fn read_json(text: &str) -> Result<(Vec<ReadRow>, Option<String>), AppError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // the parser's words without the position it ends them with (named apart)
        let words = e.to_string();
        let words = words.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&words);
        AppError::validation(ImportDetail::MalformedJson { line: &e.line(), column: &e.column(), reason: &echo(words) })
    })?;
    let shape = || AppError::validation(ImportDetail::JsonShape);
    let (rows, reason) = match value {
        Value::Array(rows) => (rows, None),
        Value::Object(mut map) => {
            let rows = match map.remove("rows") {
                Some(Value::Array(rows)) => rows,
                _ => return Err(shape()),
            };
            let reason = match map.remove("reason") {
                None | Some(Value::Null) => None,
                Some(Value::String(r)) => Some(r),
                Some(_) => return Err(shape()),
            };
            if let Some(k) = map.keys().next() {
                return Err(AppError::validation(ImportDetail::UnknownJsonKey { key: &echo(k) }));
            }
            (rows, reason)
        }
        _ => return Err(shape()),
    };
    check_count(rows.len())?;
    // a row that is not a row (the OpenAPI document's `RowInput`) refuses the whole text, naming it; what a well-formed
    // row asks for is checked row by row, into the report
    let rows = rows
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            // an object: serde would also take a row written as an array of its fields in order
            let v = if v.is_object() { v } else { Value::String(format!("a row is an object, not {v}")) };
            serde_json::from_value::<RowInput>(v)
                .map(Ok)
                .map_err(|e| AppError::validation(ImportDetail::JsonRowShape { row: &(i + 1), reason: &echo(&e.to_string()) }))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((rows, reason))
}

/// Reads CSV with a header row of [`COLUMNS`] names (any order, unused ones may be left out).
pub(crate) fn read_csv(text: &str) -> Result<Vec<ReadRow>, AppError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a BOM from spreadsheet programs
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| AppError::validation(ImportDetail::CsvHeaderUnreadable { reason: &echo(&e.to_string()) }))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect::<Vec<_>>();
    if headers.iter().all(|h| h.is_empty()) {
        return Err(AppError::validation(ImportDetail::CsvHeaderMissing));
    }
    for h in &headers {
        if !COLUMNS.contains(&h.as_str()) {
            return Err(AppError::validation(ImportDetail::CsvUnknownColumn { column: &echo(h), allowed: &COLUMNS.join(", ") }));
        }
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        if rows.len() >= MAX_ROWS {
            return Err(too_many());
        }
        let row = match record {
            Err(e) => Err(AppError::validation(ImportDetail::CsvRowUnreadable { reason: &echo(&e.to_string()) })),
            Ok(r) if r.len() > headers.len() => Err(AppError::validation(ImportDetail::CsvRowTooWide { fields: &r.len(), header: &headers.len() })),
            Ok(r) => {
                let map: serde_json::Map<String, Value> =
                    headers.iter().zip(r.iter()).filter(|(_, v)| !v.is_empty()).map(|(h, v)| (h.clone(), Value::String(v.to_string()))).collect();
                serde_json::from_value::<RowInput>(Value::Object(map))
                    .map_err(|e| AppError::validation(ImportDetail::CsvRowShape { reason: &echo(&e.to_string()) }))
            }
        };
        rows.push(row);
    }
    check_count(rows.len())?;
    Ok(rows)
}

fn too_many() -> AppError {
    AppError::validation(ImportDetail::TooManyRows { max: &MAX_ROWS })
}

fn check_count(n: usize) -> Result<(), AppError> {
    if n == 0 {
        return Err(AppError::validation(ImportDetail::NoRows));
    }
    if n > MAX_ROWS {
        return Err(too_many());
    }
    Ok(())
}

/// A row, checked and tied to its counter key, ready to apply.
struct Planned {
    request: NumberRequest,
    at: chrono::DateTime<Utc>,
    what: Override,
    kind: &'static str,
    key: String,
}

/// Runs an import: every row is checked and applied inside one transaction, which is committed only when every row is
/// ok and `dry_run` is false. Bad input as a whole (malformed text, too large, no rows, not a super admin) is an error,
/// recorded in the error log with who and what; a refused row is reported in its row.
pub(crate) async fn bulk_import(
    s: &Engine,
    caller: &Caller,
    text: &str,
    format: ImportFormat,
    reason: Option<&str>,
    dry_run: bool,
) -> Result<ImportReport, AppError> {
    let request = json!({ "format": format!("{format:?}"), "dryRun": dry_run, "bytes": text.len(), "reason": reason });
    AdminOp::new(s, caller, "IMPORT", request)
        .run(async {
            if caller.require_super_admin().is_err() {
                return Err(AppError::ManualOverrideNotAllowed);
            }
            if text.len() > MAX_BYTES {
                return Err(AppError::PayloadTooLarge);
            }
            let (rows, doc_reason) = match format {
                ImportFormat::Json => read_json(text)?,
                ImportFormat::Csv => (read_csv(text)?, None),
            };
            let reason = reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_string)
                .or(doc_reason.filter(|r| !r.trim().is_empty()))
                .unwrap_or_else(|| ImportDetail::DefaultReason.render(Lang::Th));
            let reason = admin_ops::check_reason(&reason)?;
            let snapshot = s.reference.get().await?;
            let planned: Vec<Result<Planned, AppError>> = rows.into_iter().map(|r| r.and_then(|r| plan(&snapshot, r, s.clock.now()))).collect();

            let (planned, reason, snapshot) = (&planned, &reason, &snapshot);
            // A lost race is retried as every counter transaction is (`counter_tx::retrying`).
            counter_tx::retrying(|| async move {
                let now = s.clock.now_ms();
                let mut tx = s.db.begin_write().await.map_err(astore::sql)?;
                let mut reports = Vec::with_capacity(planned.len());
                let mut skipped_total = 0i64;
                // A lost race or a database failure is no fault of the row, and may have ended the transaction on the
                // server (a MariaDB deadlock rolls it back): stop at once, never run more rows in it.
                let mut aborted = None;
                for (i, p) in planned.iter().enumerate() {
                    let outcome = match p {
                        Err(e) => Err(e.clone()),
                        Ok(p) => match apply_row(s, &mut tx, caller, snapshot, p, reason, now).await {
                            Err(e @ (AppError::VersionConflict(_) | AppError::Database { .. } | AppError::Internal { .. })) => {
                                aborted = Some(e);
                                break;
                            }
                            other => other,
                        },
                    };
                    let outcome = outcome.and_then(|r| {
                        skipped_total += r.skipped;
                        if skipped_total > MAX_TOTAL_SKIPPED {
                            Err(AppError::validation(ImportDetail::TooManySkipped { max: &MAX_TOTAL_SKIPPED }))
                        } else {
                            Ok(r)
                        }
                    });
                    reports.push(row_report(i, p, outcome));
                }
                if let Some(e) = aborted {
                    let _ = tx.rollback().await;
                    return Err(e);
                }
                let mut report = ImportReport::new(dry_run, reports);
                if dry_run || report.error_rows > 0 {
                    tx.rollback().await.map_err(astore::sql)?;
                    return Ok(report);
                }
                let summary = AuditEntry {
                    operation: "MANUAL_OVERRIDE".into(),
                    status: "BULK_IMPORT".into(),
                    metadata: Some(
                        json!({
                            "reason": reason,
                            "rows": report.total,
                            "numbers": report.rows.iter().filter(|r| r.kind == "NUMBER").count(),
                            "counters": report.rows.iter().filter(|r| r.kind == "COUNTER").count(),
                            "format": format,
                        })
                        .to_string(),
                    ),
                    ..caller.audit_base(now)
                };
                audit::append(&mut tx, s.db.dialect, ADMIN_CHAIN, &[summary]).await?;
                tx.commit().await.map_err(astore::sql)?;
                report.applied = true;
                Ok(report)
            })
            .await
        })
        .await
}

/// Checks a row against the reference data and computes the numbering request its counter is found with.
fn plan(snapshot: &Snapshot, r: RowInput, now: chrono::DateTime<Utc>) -> Result<Planned, AppError> {
    let project = snapshot.project(None, Some(r.project_code.as_deref().ok_or_else(|| required(ImportDetail::FieldProjectCode))?))?;
    let correspondence_type = snapshot
        .correspondence_type(None, Some(r.correspondence_type_code.as_deref().ok_or_else(|| required(ImportDetail::FieldCorrespondenceTypeCode))?))?;
    let base = NumberRequest { project_id: Some(project.id), correspondence_type_id: Some(correspondence_type.id), ..Default::default() };
    match (r.document_number, r.value) {
        (Some(number), None) => {
            // The number's own parts and period select its counter: read it with the template of (project, type).
            let chosen = templates::resolve(snapshot, project.id, correspondence_type.id);
            let template =
                Template::parse(&chosen.template).map_err(|_| AppError::internal(format!("stored template '{}' is invalid", chosen.template)))?;
            let text: String = number.trim().nfc().collect();
            let parsed = template
                .parse_number(&text, &project.code)
                .filter(|p| p.seq >= 1)
                .ok_or_else(|| AppError::invalid_format(AdminDetail::NumberNotInTemplate { number: &echo(&text), template: &template.source() }))?;
            let (year, month) = crate::numbering::bangkok_date(now);
            let (year, month) = match (parsed.year, parsed.fiscal_year) {
                // a number that shows only its fiscal year: the first month of that year selects it
                (None, Some(fy)) => {
                    let first = project.fiscal_year_first_month;
                    (if first > 1 { fy - 1 } else { fy }, parsed.month.unwrap_or(first))
                }
                _ => (parsed.year.unwrap_or(year), parsed.month.unwrap_or(month)),
            };
            let at = instant_in(year, month)?;
            let request = counter_tx::admin::parts_request(&parsed, NumberRequest { revision: parsed.rev.clone(), ..base });
            Ok(Planned {
                request,
                at,
                what: Override::Register { document_number: text.clone(), document_id: r.document_id },
                kind: "NUMBER",
                key: text,
            })
        }
        (None, Some(value)) => {
            let value: i64 =
                value.parse().ok().filter(|v| *v >= 0).ok_or_else(|| AppError::validation(ImportDetail::ValueNotCount { given: &echo(&value) }))?;
            if r.document_id.is_some() {
                return Err(AppError::validation(ImportDetail::DocumentIdWithValue));
            }
            let (cur_year, cur_month) = crate::numbering::bangkok_date(now);
            let year = match r.year.as_deref() {
                None => cur_year,
                Some(y) => y
                    .parse::<i32>()
                    .ok()
                    .map(|y| if y > 2400 { y - 543 } else { y })
                    .filter(|y| (1900..=2200).contains(y))
                    .ok_or_else(|| AppError::validation(ImportDetail::BadYear { given: &echo(y) }))?,
            };
            let month = match r.month.as_deref() {
                None => cur_month,
                Some(m) => m
                    .parse::<u32>()
                    .ok()
                    .filter(|m| (1..=12).contains(m))
                    .ok_or_else(|| AppError::validation(ImportDetail::BadMonth { given: &echo(m) }))?,
            };
            // how people name the counter: project, type, the parts given, the year (B.E.) and month asked for
            let parts = [&r.originator_code, &r.recipient_code, &r.sub_type_number, &r.rfa_type_code, &r.discipline_code, &r.contract_code];
            let parts: Vec<&str> = parts.iter().filter_map(|p| p.as_deref()).collect();
            let mut key: String = format!("{} {} {}", project.code, correspondence_type.code, parts.join(" ")).trim_end().chars().take(120).collect();
            key.push_str(&format!(" {}", year + 543));
            if r.month.is_some() {
                key.push_str(&format!("/{month:02}"));
            }
            let request = NumberRequest {
                originator_code: r.originator_code,
                recipient_code: r.recipient_code,
                sub_type_number: r.sub_type_number,
                rfa_type_code: r.rfa_type_code,
                discipline_code: r.discipline_code,
                contract_code: r.contract_code,
                ..base
            };
            Ok(Planned { request, at: instant_in(year, month)?, what: Override::SetValue(value), kind: "COUNTER", key })
        }
        _ => Err(AppError::validation(ImportDetail::NumberOrValue)),
    }
}

/// An instant inside (year, month) in Bangkok: the counter period a row belongs to is computed from it.
fn instant_in(year: i32, month: u32) -> Result<chrono::DateTime<Utc>, AppError> {
    Utc.with_ymd_and_hms(year, month, 15, 5, 0, 0).single().ok_or_else(|| AppError::validation(ImportDetail::BadYearMonth))
}

/// One row inside the import's transaction: its counter (created when missing), then the manual override.
async fn apply_row(
    s: &Engine,
    tx: &mut Tx<'_>,
    caller: &Caller,
    snapshot: &Snapshot,
    p: &Planned,
    reason: &str,
    now: i64,
) -> Result<OverrideResult, AppError> {
    let resolved = resolve(snapshot, &p.request, p.at)?;
    let max = resolved.template.max_seq() as i64;
    let counter = counter_tx::load_or_create_counter(tx, s.db.dialect, &resolved.key, max, now).await?.counter;
    let what = match &p.what {
        Override::SetValue(v) => Override::SetValue(*v),
        Override::Register { document_number, document_id } => {
            Override::Register { document_number: document_number.clone(), document_id: document_id.clone() }
        }
    };
    let prepared = admin_ops::prepare_override(snapshot, &counter, what)?;
    admin_ops::apply_override(s, tx, caller, counter.row.id, &prepared, reason, now).await
}

fn row_report(i: usize, p: &Result<Planned, AppError>, outcome: Result<OverrideResult, AppError>) -> ImportRowReport {
    let (kind, key) = match p {
        Ok(p) => (p.kind.to_string(), Some(p.key.clone())),
        Err(_) => ("?".to_string(), None),
    };
    let action = p.as_ref().ok().map(|p| if p.kind == "NUMBER" { "REGISTER".to_string() } else { "SET".to_string() });
    match outcome {
        Ok(r) => ImportRowReport {
            row: i + 1,
            kind,
            key,
            action,
            ok: true,
            message: None,
            detail: None,
            code: None,
            counter_id: Some(r.counter_id),
            last_number: Some(r.last_number),
        },
        Err(e) => ImportRowReport {
            row: i + 1,
            kind,
            key,
            action,
            ok: false,
            message: Some(e.message_th()),
            detail: Some(e.to_string()),
            code: Some(e.code().code().to_string()),
            counter_id: None,
            last_number: None,
        },
    }
}

/// A row that leaves out `field` (an `ImportDetail::Field…` word).
fn required(field: ImportDetail<'_>) -> AppError {
    AppError::validation(ImportDetail::Required { field: &field })
}
