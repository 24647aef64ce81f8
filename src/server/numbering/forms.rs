//! The reserve page without scripts: its plain HTML forms post here (`application/x-www-form-urlencoded`) and are
//! answered `303 See Other` back to the page with the same choices (post/redirect/get). What a post did (the number
//! held, or the refusal with its Thai message) waits in the session until the page shows it once. A tap before the
//! browser bundle has loaded is such a post too, so no tap is lost. The services are the ones REST and the server
//! functions call: the same rate limits, audit and rules.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Request, State};
use axum::http::header;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Form, Router};
use tower_sessions::Session;

use super::Numbering;
use crate::contract::forms::{path, HeldNumber, ReserveChoices, ReserveFlash, ReservePageData, Shows};
use crate::contract::messages::RequestDetail;
use crate::contract::{ApiError, Lang, NumberStatus, StatusResult, WorkflowContext};
use crate::server::auth::{Access, Caller};
use crate::server::error::{echo, page_lang, AppError};
use crate::server::numbering::counter_tx::State as NumberState;
use crate::server::reference::Catalog;

/// The session's key of what the last post left for the page.
const FLASH_KEY: &str = "reserve.flash";

/// The posted fields, as the browser sends them: names may repeat or be unknown; what does not parse is no choice.
pub(super) type Fields = Vec<(String, String)>;

pub(crate) fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Access>: FromRef<S>,
    Arc<Numbering>: FromRef<S>,
{
    Router::new().route(path::RESERVE, post(reserve)).route(path::CONFIRM, post(confirm)).route(path::CANCEL, post(cancel))
}

pub(super) fn field(fields: &Fields, name: &str) -> Option<String> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

pub(super) fn choices(fields: &Fields) -> ReserveChoices {
    ReserveChoices::from_fields(|name| field(fields, name))
}

/// Back to the page with the choices, after keeping what the post did for it.
async fn back(session: &Session, choices: &ReserveChoices, flash: ReserveFlash) -> Response {
    if let Err(e) = session.insert(FLASH_KEY, &flash).await {
        return AppError::internal_from("session store", e).into_response();
    }
    see_other(&choices.page_address())
}

pub(crate) fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_string()), (header::CACHE_CONTROL, "no-store".to_string())]).into_response()
}

/// A form post as its handler takes it: the caller and the posted fields. A session that ended is sent to the login
/// page; a body that is not a form is a 400 with the error body. (Last among a handler's arguments: it reads the body.)
pub(super) struct Posted {
    pub(super) caller: Caller,
    pub(super) fields: Fields,
    /// The page's language, for what the page is told.
    pub(super) lang: Lang,
}

impl<S> FromRequest<S> for Posted
where
    S: Send + Sync,
    Arc<Access>: FromRef<S>,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        let caller = Caller::from_request_parts(&mut parts, state).await;
        let lang = page_lang(&parts.headers);
        let form = Form::<Fields>::from_request(Request::from_parts(parts, body), state).await;
        admit(caller, form).map(|(caller, fields)| Posted { caller, fields, lang }).map_err(|answer| *answer)
    }
}

/// The caller, or the login page for a session that ended; a body that is not a form is a 400 with the error body.
fn admit(caller: Result<Caller, AppError>, form: Result<Form<Fields>, FormRejection>) -> Result<(Caller, Fields), Box<Response>> {
    let fields = match form {
        Ok(Form(fields)) => fields,
        Err(rejection) => {
            let refused = AppError::validation(RequestDetail::FormExpected { reason: &echo(&rejection.to_string()) });
            return Err(Box::new(refused.into_response()));
        }
    };
    match caller {
        Ok(caller) => Ok((caller, fields)),
        Err(AppError::Unauthenticated) => Err(Box::new(see_other("/login"))),
        Err(e) => Err(Box::new(e.into_response())),
    }
}

/// What a form post's page is told of a refusal, in its language.
pub(super) fn refusal(e: &AppError, lang: Lang) -> Option<ApiError> {
    if e.status().is_server_error() {
        tracing::error!(error = %e.report(), "form post failed");
    }
    Some(e.api_error(lang))
}

async fn reserve(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
    let chosen = choices(&fields);
    let flash = match super::reserve(&s, &caller, &chosen.request_of_every_part(), None).await {
        Ok(result) => ReserveFlash { held: Some(HeldNumber { result, status: NumberStatus::Reserved }), error: None },
        Err(e) => ReserveFlash { held: None, error: refusal(&e, lang) },
    };
    back(&session, &chosen, flash).await
}

/// The held number as the confirm and cancel forms name it (hidden fields), for the page to show it again.
fn held_of(s: &Numbering, fields: &Fields, status: NumberStatus, workflow: Option<WorkflowContext>) -> Option<HeldNumber> {
    let token = field(fields, "token")?;
    let number = field(fields, "number")?;
    let expires_at = field(fields, "expiresAt").and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())?.with_timezone(&chrono::Utc);
    Some(HeldNumber::named(token, number, expires_at, status, workflow, s.engine.clock.now()))
}

/// What a confirm or cancel did, for the page: the number with its new status and what may follow, or still held
/// (with what a held number allows) and the refusal.
fn settled(s: &Numbering, caller: &Caller, fields: &Fields, outcome: Result<StatusResult, AppError>, lang: Lang) -> ReserveFlash {
    match outcome {
        Ok(r) => ReserveFlash { held: held_of(s, fields, r.status, r.workflow), error: None },
        Err(e) => {
            let token = field(fields, "token").unwrap_or_default();
            let held = s.engine.lifecycle.context(&token, NumberState::Reserved, s.engine.clock.now_ms(), caller);
            ReserveFlash { held: held_of(s, fields, NumberStatus::Reserved, Some(held)), error: refusal(&e, lang) }
        }
    }
}

async fn confirm(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
    let token = field(&fields, "token").unwrap_or_default();
    let document_id = field(&fields, "documentId").unwrap_or_default();
    let flash = settled(&s, &caller, &fields, super::confirm(&s, &caller, &token, &document_id, None).await, lang);
    back(&session, &choices(&fields), flash).await
}

async fn cancel(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
    let token = field(&fields, "token").unwrap_or_default();
    let reason = field(&fields, "reason");
    let flash = settled(&s, &caller, &fields, super::cancel(&s, &caller, &token, reason.as_deref(), None).await, lang);
    back(&session, &choices(&fields), flash).await
}

/// What the reserve page shows at first for these choices: the reference lists, the template and, when every part it
/// shows is chosen, the preview; and what the last form post left, taken from the session (shown once).
pub(crate) async fn page(
    numbering: &Numbering,
    catalog: &Catalog,
    caller: &Caller,
    session: &Session,
    chosen: &ReserveChoices,
    lang: Lang,
) -> Result<ReservePageData, AppError> {
    let reference = crate::server::reference::data_for(catalog, caller).await?;
    let template = match (chosen.project, chosen.correspondence_type) {
        (Some(p), Some(t)) => Some(crate::server::templates::resolved_for(catalog, caller, p, t).await.map_err(|e| e.api_error(lang))),
        _ => None,
    };
    let request = match &template {
        Some(Ok(t)) => Shows::of(&t.template).and_then(|shows| chosen.request(&shows)),
        _ => None,
    };
    let preview = match request {
        Some(req) => Some(super::preview(numbering, caller, &req).await.map_err(|e| e.api_error(lang))),
        None => None,
    };
    let flash: ReserveFlash = session.remove(FLASH_KEY).await.map_err(|e| AppError::internal_from("session store", e))?.unwrap_or_default();
    Ok(ReservePageData { reference, template, preview, flash })
}
