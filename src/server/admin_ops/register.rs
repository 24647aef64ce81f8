//! The register of a (project, type)'s counters: one row per sequence from 1 to each counter's last, with its number,
//! status, document, who and when, and for every sequence not confirmed the reason in words — cancelled (by whom,
//! why), expired, a block's hold ended, voided (and replaced by which number), skipped by a manual override, taken by
//! a duplicate, released by a reset. CSV or XLSX.
//!
//! Memory stays bounded by the output, not the counter: the numbers and the counter's audit chain are read as two
//! streams ordered by sequence (the database sorts) and merged; CSV is sent as it is written, XLSX rows spill to a
//! temporary file (`constant_memory`) until the workbook is zipped.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

use crate::contract::messages::{AdminDetail, Detail};
use crate::contract::{Lang, NumberStatus};
use crate::numbering::PeriodKey;
use crate::server::audit::counter_chain;
use crate::server::auth::Caller;
use crate::server::db::{ms_to_datetime, Db};
use crate::server::error::{ApiQuery, AppError};
use crate::server::numbering::counter_tx::lifecycle::BLOCK_EXPIRED;
use crate::server::numbering::counter_tx::store::Counter;
use crate::server::numbering::Engine;
use crate::server::reference::ReferenceCache;

/// One row of the register.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RegisterRow {
    pub(crate) period: String,
    pub(crate) sequence: i64,
    pub(crate) document_number: String,
    /// CONFIRMED, RESERVED, CANCELLED, EXPIRED, VOID, SKIPPED, RELEASED, FAILED, MISSING.
    pub(crate) status: String,
    pub(crate) document_id: String,
    pub(crate) who: String,
    /// Bangkok time of the sequence's last event.
    pub(crate) when: String,
    pub(crate) reason: String,
}

/// A number row as the register reads it.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub(crate) struct RegNumber {
    pub(crate) sequence: i64,
    pub(crate) number: String,
    pub(crate) status: String,
    pub(crate) document_id: Option<String>,
    pub(crate) cancel_reason: Option<String>,
    pub(crate) block_holder: Option<String>,
    pub(crate) changed_at: i64,
}

/// An audit row of the counter's chain about one sequence.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub(crate) struct RegAudit {
    pub(crate) sequence: i64,
    pub(crate) operation: String,
    pub(crate) status: String,
    pub(crate) document_number: Option<String>,
    pub(crate) username: Option<String>,
    pub(crate) metadata: Option<String>,
    pub(crate) created_at: i64,
}

/// Bangkok time: UTC+7 all year (no daylight saving since 1920), so a fixed offset, not a time-zone lookup per row.
fn bangkok(ms: i64) -> String {
    let plus7 = chrono::FixedOffset::east_opt(7 * 3600).expect("UTC+7");
    ms_to_datetime(ms).with_timezone(&plus7).format("%Y-%m-%d %H:%M:%S").to_string()
}

fn meta(a: &RegAudit, field: &str) -> Option<String> {
    let v: Value = serde_json::from_str(a.metadata.as_deref()?).ok()?;
    v.get(field).and_then(|x| x.as_str().map(str::to_string).or_else(|| (!x.is_null()).then(|| x.to_string())))
}

/// The row of one sequence, from its numbers (every revision, ascending) and its audit rows (chain order). Pure.
pub(crate) fn explain(period: &str, sequence: i64, numbers: &[RegNumber], audits: &[RegAudit], lang: Lang) -> RegisterRow {
    let last_audit = audits.last();
    let who = |a: Option<&RegAudit>| a.and_then(|a| a.username.clone()).unwrap_or_default();
    let mut row = RegisterRow { period: period.to_string(), sequence, ..Default::default() };
    let Some(n) = numbers.last() else {
        // no number on record: the audit says why
        row.who = who(last_audit);
        row.when = last_audit.map(|a| bangkok(a.created_at)).unwrap_or_default();
        row.document_number = last_audit.and_then(|a| a.document_number.clone()).unwrap_or_default();
        let (status, reason) = match last_audit {
            Some(a) if a.operation == "MANUAL_OVERRIDE" => {
                ("SKIPPED", AdminDetail::Skipped { who: &row.who, reason: &meta(a, "reason").unwrap_or_default() }.render(lang))
            }
            Some(a) if a.operation == "RESET_EXECUTE" => {
                ("RELEASED", AdminDetail::Released { request: &meta(a, "requestId").unwrap_or_default(), who: &row.who }.render(lang))
            }
            Some(a) if a.status == "FAILED" => {
                let (reason, error) = (meta(a, "reason").unwrap_or_default(), meta(a, "error").unwrap_or_default());
                ("FAILED", AdminDetail::FailedSequence { reason: &reason, error: &error }.render(lang))
            }
            Some(a) => ("MISSING", AdminDetail::NoNumber { operation: &a.operation, status: &a.status }.render(lang)),
            None => ("MISSING", AdminDetail::Unexplained.render(lang)),
        };
        row.status = status.into();
        row.reason = reason;
        return row;
    };
    row.document_number = n.number.clone();
    row.document_id = n.document_id.clone().unwrap_or_default();
    row.who = who(last_audit);
    row.when = bangkok(last_audit.map_or(n.changed_at, |a| a.created_at.max(n.changed_at)));
    let block = n.block_holder.as_deref().map(|holder| AdminDetail::OfBlock { holder: &holder }.render(lang)).unwrap_or_default();
    let status = NumberStatus::parse(&n.status);
    let (status, reason) = match (status, n.cancel_reason.as_deref()) {
        (Some(NumberStatus::Confirmed), _) => {
            let legacy = audits.iter().any(|a| a.operation == "MANUAL_OVERRIDE" && meta(a, "legacy").as_deref() == Some("true"));
            let reason = if legacy {
                let a = audits.iter().rev().find(|a| a.operation == "MANUAL_OVERRIDE");
                AdminDetail::Legacy { who: &who(a), reason: &a.and_then(|a| meta(a, "reason")).unwrap_or_default() }.render(lang)
            } else {
                String::new()
            };
            ("CONFIRMED", reason)
        }
        (Some(NumberStatus::Reserved), _) => ("RESERVED", AdminDetail::Reserved { block: &block }.render(lang)),
        (Some(NumberStatus::Cancelled), Some("expired")) => ("EXPIRED", AdminDetail::Expired.render(lang)),
        (Some(NumberStatus::Cancelled), Some(r)) if r == BLOCK_EXPIRED => ("EXPIRED", AdminDetail::BlockExpired { block: &block }.render(lang)),
        (Some(NumberStatus::Cancelled), reason) => {
            let by = audits.iter().rev().find(|a| a.operation == "CANCEL");
            ("CANCELLED", AdminDetail::Cancelled { who: &who(by), reason: &reason.unwrap_or("cancelled") }.render(lang))
        }
        (Some(NumberStatus::Void), _) => {
            let void = audits.iter().rev().find(|a| a.operation == "VOID");
            let replaced =
                void.and_then(|a| meta(a, "replacedBy")).map(|number| AdminDetail::ReplacedBy { number: &number }.render(lang)).unwrap_or_default();
            let reason = void.and_then(|a| meta(a, "reason")).unwrap_or_default();
            ("VOID", AdminDetail::Voided { who: &who(void), reason: &reason, replaced: &replaced }.render(lang))
        }
        (None, _) => ("MISSING", AdminDetail::UnknownStatus { status: &n.status }.render(lang)),
    };
    row.status = status.into();
    row.reason = reason;
    row
}

const NUMBERS_SQL: &str = "SELECT sequence, number, status, document_id, cancel_reason, block_holder, \
    COALESCE(cancelled_at, confirmed_at, created_at) AS changed_at FROM document_numbers WHERE counter_id = ? ORDER BY sequence, revision";
const AUDIT_SQL: &str = "SELECT sequence, operation, status, document_number, username, metadata, created_at FROM audit_log \
    WHERE chain_key = ? AND sequence IS NOT NULL ORDER BY sequence, chain_seq";

/// Moves the items of `stream` (ordered by sequence) up to `seq` out of it, keeping those of `seq` in `into`.
async fn take_through<T, S>(
    stream: &mut futures::stream::Peekable<S>,
    seq: i64,
    into: &mut Vec<T>,
    sequence_of: fn(&T) -> i64,
) -> Result<(), AppError>
where
    S: Stream<Item = Result<T, sqlx::Error>> + Unpin,
{
    loop {
        let next = match std::pin::Pin::new(&mut *stream).peek().await {
            None => return Ok(()),
            Some(Ok(item)) => sequence_of(item),
            Some(Err(_)) => -1,
        };
        if next > seq {
            return Ok(());
        }
        let Some(item) = stream.next().await.transpose()? else { return Ok(()) };
        if next == seq {
            into.push(item);
        }
    }
}

/// Every row of `counter`'s register, in sequence order, handed to `sink` one at a time.
/// Where the register's rows go, one at a time.
pub(crate) trait RowSink: Send {
    fn row(&mut self, r: RegisterRow) -> impl std::future::Future<Output = Result<(), AppError>> + Send;
}

pub(crate) async fn rows_of(db: &Db, counter: &Counter, sink: &mut impl RowSink, lang: Lang) -> Result<(), AppError> {
    let period = counter.key.period.to_string();
    let chain = counter_chain(counter.row.id);
    let mut numbers = sqlx::query_as::<_, RegNumber>(NUMBERS_SQL).bind(counter.row.id).fetch(&db.pool).peekable();
    let mut audits = sqlx::query_as::<_, RegAudit>(AUDIT_SQL).bind(chain).fetch(&db.pool).peekable();
    let (mut ns, mut aus) = (Vec::new(), Vec::new());
    for seq in 1..=counter.row.last_number {
        ns.clear();
        aus.clear();
        take_through(&mut numbers, seq, &mut ns, |n: &RegNumber| n.sequence).await?;
        take_through(&mut audits, seq, &mut aus, |a: &RegAudit| a.sequence).await?;
        sink.row(explain(&period, seq, &ns, &aus, lang)).await?;
    }
    Ok(())
}

/// The register's route (under `/api/v1`).
pub(crate) fn router<S>() -> utoipa_axum::router::OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    std::sync::Arc<crate::server::auth::Access>: axum::extract::FromRef<S>,
    std::sync::Arc<Engine>: axum::extract::FromRef<S>,
{
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(register))
}

/// `GET /document-numbering/register` parameters.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct RegisterQuery {
    /// the project's code
    pub(crate) project_code: String,
    /// the correspondence type's code
    pub(crate) correspondence_type_code: String,
    /// one period only (`YEAR_2026`, `MONTH_2026_01`, `FY_2570`, `NONE`, `CONTRACT_12`); absent: every period
    #[param(schema_with = crate::contract::lenient::schema::period_key)]
    pub(crate) period: Option<String>,
    /// `csv` (default) or `xlsx`
    #[param(schema_with = crate::contract::lenient::schema::register_format)]
    pub(crate) format: Option<String>,
}

/// What the register is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RegisterFormat {
    Csv,
    Xlsx,
}

impl RegisterFormat {
    /// `csv` (also absent or blank) or `xlsx`, in any case, trimmed: what the OpenAPI document's pattern allows.
    fn parse(asked: Option<&str>) -> Result<RegisterFormat, AppError> {
        match asked.map(str::trim).map(str::to_ascii_lowercase).as_deref() {
            None | Some("") | Some("csv") => Ok(RegisterFormat::Csv),
            Some("xlsx") => Ok(RegisterFormat::Xlsx),
            Some(other) => {
                let other: String = other.chars().take(20).collect();
                Err(AppError::validation(AdminDetail::RegisterFormat { given: &other }))
            }
        }
    }
}

/// The register's headings, one a column.
fn header(lang: Lang) -> [String; 9] {
    [
        AdminDetail::HeadingPeriod,
        AdminDetail::HeadingSequence,
        AdminDetail::HeadingNumber,
        AdminDetail::HeadingStatus,
        AdminDetail::HeadingDocumentId,
        AdminDetail::HeadingWho,
        AdminDetail::HeadingWhen,
        AdminDetail::HeadingReason,
        AdminDetail::HeadingCounter,
    ]
    .map(|heading| heading.render(lang))
}

/// The counters of the register: admins of the project (super admins: any).
async fn counters_of(db: &Db, reference: &ReferenceCache, caller: &Caller, q: &RegisterQuery) -> Result<Vec<Counter>, AppError> {
    caller.require_admin()?;
    let snapshot = reference.get().await?;
    let project = snapshot.project(None, Some(&q.project_code))?.id;
    let ctype = snapshot.correspondence_type(None, Some(&q.correspondence_type_code))?.id;
    caller.require_project_admin(project)?;
    let period = match q.period.as_deref() {
        None => None,
        Some(p) => Some(PeriodKey::parse(p).ok_or_else(|| {
            let p: String = p.chars().take(40).collect();
            AppError::validation(AdminDetail::RegisterPeriod { given: &p })
        })?),
    };
    let all = super::store::counters(db, Some(project), None, Some(ctype), None, i64::MAX / 2).await?;
    Ok(all.into_iter().filter(|c| period.is_none_or(|p| p == c.key.period)).collect())
}

fn counter_label(c: &Counter) -> String {
    format!("#{} {}", c.row.id, c.key.lock_name())
}

#[utoipa::path(get, path = "/document-numbering/register", params(RegisterQuery),
    responses(
        (status = 200, description = "one row per sequence of each counter, with the reason of every number not confirmed",
            content((String = "text/csv"), (Vec<u8> = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"))),
        // an unknown project or type is a 404
        crate::server::error::ByIdErrors,
    ),
    tag = "counters")]
pub(crate) async fn register(
    State(s): State<std::sync::Arc<Engine>>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    ApiQuery(q): ApiQuery<RegisterQuery>,
) -> Result<Response, AppError> {
    let lang = crate::server::error::callers_lang(&headers);
    let format = RegisterFormat::parse(q.format.as_deref())?;
    let counters = counters_of(&s.db, &s.reference, &caller, &q).await?;
    let name = format!("register-{}-{}", q.project_code, q.correspondence_type_code).replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
    if format == RegisterFormat::Xlsx {
        let bytes = xlsx_of(&s.db, &counters, lang).await?;
        let headers = [
            (axum::http::header::CONTENT_TYPE, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet".to_string()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}.xlsx\"")),
            (axum::http::header::CONTENT_LANGUAGE, lang.code().to_string()),
        ];
        return Ok((headers, bytes).into_response());
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(8);
    let db = s.db.clone();
    tokio::spawn(async move {
        let mut sink = CsvSink { w: csv::Writer::from_writer(Vec::with_capacity(CSV_CHUNK)), tx, label: String::new() };
        let _ = sink.w.write_record(header(lang));
        for c in &counters {
            sink.label = counter_label(c);
            if let Err(e) = rows_of(&db, c, &mut sink, lang).await {
                let _ = sink.tx.send(Err(std::io::Error::other(e.to_string()))).await;
                return;
            }
        }
        let _ = sink.tx.send(Ok(Bytes::from(sink.w.into_inner().unwrap_or_default()))).await;
    });
    let body = Body::from_stream(tokio_stream_of(rx));
    let headers = [
        (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
        (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}.csv\"")),
        (axum::http::header::CONTENT_LANGUAGE, lang.code().to_string()),
    ];
    Ok((headers, body).into_response())
}

struct CsvSink {
    w: csv::Writer<Vec<u8>>,
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    label: String,
}

impl RowSink for CsvSink {
    async fn row(&mut self, r: RegisterRow) -> Result<(), AppError> {
        let seq = r.sequence.to_string();
        let fields = [&r.period, &seq, &r.document_number, &r.status, &r.document_id, &r.who, &r.when, &r.reason, &self.label];
        self.w.write_record(fields).map_err(|e| AppError::internal_from("register CSV", e))?;
        if self.w.get_ref().len() >= CSV_CHUNK {
            // the writer keeps what it has not flushed: a new one takes over, the full one's bytes go out
            let full = std::mem::replace(&mut self.w, csv::Writer::from_writer(Vec::with_capacity(CSV_CHUNK)));
            let bytes = full.into_inner().map_err(|e| AppError::internal(format!("register CSV: {e}")))?;
            // a client that went away ends the export
            self.tx.send(Ok(Bytes::from(bytes))).await.map_err(|_| AppError::internal("register: the client went away"))?;
        }
        Ok(())
    }
}

struct XlsxSink<'a> {
    sheet: &'a mut rust_xlsxwriter::Worksheet,
    next_row: u32,
    label: String,
}

impl RowSink for XlsxSink<'_> {
    async fn row(&mut self, row: RegisterRow) -> Result<(), AppError> {
        let r = self.next_row;
        let cells = [&row.period, &row.document_number, &row.status, &row.document_id, &row.who, &row.when, &row.reason, &self.label];
        self.sheet.write_number(r, 1, row.sequence as f64).map_err(xlsx_error)?;
        for (col, v) in [0u16, 2, 3, 4, 5, 6, 7, 8].into_iter().zip(cells) {
            if !v.is_empty() {
                self.sheet.write_string(r, col, v.as_str()).map_err(xlsx_error)?;
            }
        }
        self.next_row += 1;
        Ok(())
    }
}

fn xlsx_error(e: rust_xlsxwriter::XlsxError) -> AppError {
    AppError::internal_from("register XLSX", e)
}

/// How much CSV is gathered before it goes out.
const CSV_CHUNK: usize = 64 * 1024;

fn tokio_stream_of<T>(mut rx: tokio::sync::mpsc::Receiver<T>) -> impl Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// The register as an XLSX workbook, one sheet.
pub(crate) async fn xlsx_of(db: &Db, counters: &[Counter], lang: Lang) -> Result<Vec<u8>, AppError> {
    use rust_xlsxwriter::{Format, Workbook};
    let x = xlsx_error;
    let mut book = Workbook::new();
    let sheet = book.add_worksheet_with_constant_memory().map_err(x)?;
    sheet.set_name(AdminDetail::RegisterSheet.render(lang)).map_err(x)?;
    let bold = Format::new().set_bold();
    for (col, h) in header(lang).into_iter().enumerate() {
        sheet.write_string_with_format(0, col as u16, h, &bold).map_err(x)?;
    }
    let mut sink = XlsxSink { sheet, next_row: 1, label: String::new() };
    for c in counters {
        sink.label = counter_label(c);
        rows_of(db, c, &mut sink, lang).await?;
    }
    book.save_to_buffer().map_err(x)
}
