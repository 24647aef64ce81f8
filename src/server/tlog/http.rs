//! The log's public surface: `/log/checkpoint`, `/log/key`, `/log/tile/…` (C2SP tlog-tiles: immutable, fit for a
//! CDN), and the receipts under the REST API. No login: everything here is what the log publishes anyway.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Extension;
use axum::Router;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{paper, Log};
use crate::receipt::{self, TilePath};
use crate::server::edge::Site;
use crate::server::error::{error_set, ApiQuery, AppError, FAILURES, INPUT};

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `/log/…`, outside the API (not in the OpenAPI document: its formats are C2SP's).
pub(crate) fn public<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Log>: axum::extract::FromRef<S>,
{
    Router::new().route("/log/checkpoint", get(checkpoint)).route("/log/key", get(key)).route("/log/tile/{*path}", get(tile))
}

pub(crate) fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Log>: axum::extract::FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(receipt)).routes(routes!(receipt_qr)).routes(routes!(receipt_stamp))
}

fn text(body: impl Into<axum::body::Body>, cache: &'static str, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, cache)], body.into()).into_response()
}

async fn checkpoint(State(log): State<Arc<Log>>) -> Result<Response, AppError> {
    Ok(match log.checkpoint().await? {
        Some(note) => text(note, "no-cache", "text/plain; charset=utf-8"),
        None => (StatusCode::NOT_FOUND, "no checkpoint yet\n").into_response(),
    })
}

async fn key(State(log): State<Arc<Log>>) -> Response {
    text(format!("{}\n", log.vkey()), "public, max-age=300", "text/plain; charset=utf-8")
}

async fn tile(State(log): State<Arc<Log>>, Path(path): Path<String>) -> Result<Response, AppError> {
    let Some(at) = receipt::parse_tile_path(&path) else {
        return Ok((StatusCode::NOT_FOUND, "not a tile path\n").into_response());
    };
    let data = match at {
        TilePath::Hashes { level, n, width } => log.tile(level, n, width).await?,
        TilePath::Entries { n, width } => log.entries(n, width).await?,
    };
    Ok(match data {
        Some(bytes) => text(bytes, IMMUTABLE, "application/octet-stream"),
        None => (StatusCode::NOT_FOUND, [(header::CACHE_CONTROL, "no-cache")], "not in the tree yet\n").into_response(),
    })
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ReceiptQuery {
    /// Trimmed; a value of blanks only is no code (`\S`: something not blank).
    #[param(min_length = 1, max_length = 64, pattern = r"\S")]
    pub(crate) project_code: String,
    #[param(min_length = 1, max_length = 64, pattern = r"\S")]
    pub(crate) correspondence_type_code: String,
    #[param(min_length = 1, max_length = 255, pattern = r"\S")]
    pub(crate) document_number: String,
    /// One of the log's events; none: the number's newest entry.
    #[param(pattern = "^(reserved|confirmed|cancelled|expired|voided|replaced|revised|overridden|imported|counter-reset)$")]
    pub(crate) event: Option<String>,
}

error_set!(
    /// A receipt: the number may have no entry in the log (yet).
    pub ReceiptErrors: FAILURES, INPUT; NotFound
);

/// `GET /document-numbering/receipts`: a C2SP tlog-proof of a number's entry in the transparency log, which
/// verifies offline with nothing but `/log/key`. Public, like the log.
#[utoipa::path(get, path = "/document-numbering/receipts", params(ReceiptQuery), security(()),
    responses((status = 200, content_type = "text/plain", body = String, description = "c2sp.org/tlog-proof@v1"), ReceiptErrors),
    tag = "numbering")]
pub(crate) async fn receipt(State(log): State<Arc<Log>>, ApiQuery(q): ApiQuery<ReceiptQuery>) -> Result<Response, AppError> {
    let (r, _) = find(&log, &q).await?;
    Ok(text(r, "no-cache", "text/plain; charset=utf-8"))
}

/// The receipt a query names, and the number's coordinates (trimmed); a Thai 4xx for bad input or no entry.
async fn find<'q>(log: &Log, q: &'q ReceiptQuery) -> Result<(String, [&'q str; 3]), AppError> {
    log.named_receipt(&q.project_code, &q.correspondence_type_code, &q.document_number, q.event.as_deref()).await
}

/// The verify link of the receipt a query names, on the site the caller reached.
async fn link_of(log: &Log, q: &ReceiptQuery, site: &str) -> Result<(String, String), AppError> {
    let (r, [project, type_code, number]) = find(log, q).await?;
    let link = receipt::link::verify_link(site, &r, project, type_code, number);
    Ok((r, link))
}

fn site_of(site: Option<Extension<Site>>) -> String {
    site.map(|Extension(Site(s))| s).unwrap_or_else(|| "http://localhost".into())
}

fn svg(body: String) -> Response {
    text(body, "no-cache", "image/svg+xml; charset=utf-8")
}

/// `GET /document-numbering/receipts/qr`: a QR code (SVG) of the number's verify link: the receipt itself when it
/// fits a QR code fit for paper, else the number's coordinates (the verify page fetches the receipt). Public.
#[utoipa::path(get, path = "/document-numbering/receipts/qr", params(ReceiptQuery), security(()),
    responses((status = 200, content_type = "image/svg+xml", body = String, description = "QR code of the verify link"), ReceiptErrors),
    tag = "numbering")]
pub(crate) async fn receipt_qr(
    State(log): State<Arc<Log>>,
    site: Option<Extension<Site>>,
    ApiQuery(q): ApiQuery<ReceiptQuery>,
) -> Result<Response, AppError> {
    let (_, link) = link_of(&log, &q, &site_of(site)).await?;
    Ok(svg(paper::qr_svg(&link)?))
}

/// `GET /document-numbering/receipts/stamp`: a stamp (SVG) to print on the document: the number, project, type,
/// date, the QR code of its verify link, the log's origin, and where to verify. Public.
#[utoipa::path(get, path = "/document-numbering/receipts/stamp", params(ReceiptQuery), security(()),
    responses((status = 200, content_type = "image/svg+xml", body = String, description = "a printable stamp"), ReceiptErrors),
    tag = "numbering")]
pub(crate) async fn receipt_stamp(
    State(log): State<Arc<Log>>,
    site: Option<Extension<Site>>,
    ApiQuery(q): ApiQuery<ReceiptQuery>,
) -> Result<Response, AppError> {
    let site = site_of(site);
    let (r, link) = link_of(&log, &q, &site).await?;
    // the service's own receipt: verified here too, so that the stamp never states what the log does not
    let checked = receipt::verify(&r, log.vkey()).map_err(|e| AppError::internal(format!("the log's own receipt: {e}")))?;
    Ok(svg(paper::stamp_svg(&paper::Stamp { entry: &checked.entry, site: &site, log_origin: log.origin(), link: &link })?))
}
