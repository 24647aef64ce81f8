//! The blocks page and `GET /document-numbering/blocks[/{blockId}]`: the blocks a caller may see (its own; for an
//! admin also those of its projects), and one block's numbers. Confirming or cancelling a number of a block is the
//! ordinary confirm and cancel, with the token only its reserver is shown.

use super::counter_tx::lifecycle::BLOCK_EXPIRED;
use super::counter_tx::store::status_of;
use super::counter_tx::State;
use super::store::{self, BlockRow, BlockScope};
use super::Engine;
use crate::contract::messages::NumberingDetail;
use crate::contract::{ApiTokenId, BlockDetail, BlockNumber, BlockSummary, NumberStatus, Role, UserId};
use crate::server::auth::Caller;
use crate::server::db::ms_to_datetime;
use crate::server::error::{echo, AppError};
use crate::server::reference::Snapshot;

/// The most blocks a listing answers (the newest).
const LISTED: i64 = 200;

/// Every block for a super admin; else the caller's own and, for a project admin, those of its projects.
fn scope(caller: &Caller) -> BlockScope<'_> {
    match caller.user() {
        Some(u) if u.role == Role::SuperAdmin => BlockScope::All,
        user => BlockScope::Of {
            user_id: caller.user_id(),
            api_token_id: caller.api_token_id(),
            projects: user.map(|u| u.admin_project_ids.as_slice()).unwrap_or_default(),
        },
    }
}

/// Whether `caller` reserved the block of `row` (and so holds its tokens).
fn reserved_by(caller: &Caller, row: &BlockRow) -> bool {
    (row.user_id.is_some() && row.user_id == caller.user_id()) || (row.api_token_id.is_some() && row.api_token_id == caller.api_token_id())
}

/// The reservers' names, each looked up once per answer.
type Names = std::collections::HashMap<(Option<UserId>, Option<ApiTokenId>), String>;

async fn summary(engine: &Engine, snapshot: &Snapshot, names: &mut Names, row: &BlockRow) -> Result<BlockSummary, AppError> {
    let project_code = snapshot.project(Some(row.project_id), None).map(|p| p.code.clone()).unwrap_or_default();
    let correspondence_type_code = snapshot.correspondence_type(Some(row.correspondence_type_id), None).map(|t| t.code.clone()).unwrap_or_default();
    let who = (row.user_id, row.api_token_id);
    let reserved_by = match names.get(&who) {
        Some(name) => name.clone(),
        None => {
            let name = store::reserver_name(&engine.db, row.user_id, row.api_token_id).await?;
            names.insert(who, name.clone());
            name
        }
    };
    Ok(BlockSummary {
        block_id: row.block_id.clone(),
        project_code,
        correspondence_type_code,
        holder: row.holder.clone(),
        first_number: row.first_number.clone(),
        last_number: row.last_number.clone(),
        count: row.count,
        held: row.held,
        confirmed: row.confirmed,
        cancelled: row.cancelled,
        expired: row.expired,
        hold_until: ms_to_datetime(row.hold_until.unwrap_or(row.created_at)),
        created_at: ms_to_datetime(row.created_at),
        reserved_by,
    })
}

/// `GET /document-numbering/blocks`: the newest blocks the caller may see.
pub(crate) async fn list(engine: &Engine, caller: &Caller) -> Result<Vec<BlockSummary>, AppError> {
    let rows = store::blocks(&engine.db, &scope(caller), None, BLOCK_EXPIRED, LISTED).await?;
    let snapshot = engine.reference.get().await?;
    let mut names = Names::new();
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        out.push(summary(engine, &snapshot, &mut names, row).await?);
    }
    Ok(out)
}

/// `GET /document-numbering/blocks/{blockId}`: one block and its numbers; 404 for a block the caller may not see,
/// as for one that does not exist.
pub(crate) async fn detail(engine: &Engine, caller: &Caller, block_id: &str) -> Result<BlockDetail, AppError> {
    let not_found = || AppError::not_found(NumberingDetail::BlockNotFound { block: &echo(block_id) });
    let id = uuid::Uuid::try_parse(block_id.trim()).map_err(|_| not_found())?.to_string();
    let row = store::blocks(&engine.db, &scope(caller), Some(&id), BLOCK_EXPIRED, 1).await?.into_iter().next().ok_or_else(not_found)?;
    let own = reserved_by(caller, &row);
    let mut numbers = Vec::new();
    for n in store::block_numbers(&engine.db, &id).await? {
        let status = status_of(&n.status)?;
        let state = State::of(status, n.cancel_reason.as_deref());
        // the token, and what it allows, are the reserver's
        let (token, available_actions) = match n.token.filter(|_| own && status == NumberStatus::Reserved) {
            Some(token) => {
                let actions = engine.lifecycle.context(&token, state, 0, caller).available_actions;
                (Some(token), actions)
            }
            None => (None, engine.lifecycle.actions_on_number(&n.number, state, caller)),
        };
        numbers.push(BlockNumber {
            sequence: n.sequence,
            document_number: n.number,
            status,
            document_id: n.document_id,
            token,
            cancel_reason: n.cancel_reason,
            available_actions,
        });
    }
    let snapshot = engine.reference.get().await?;
    Ok(BlockDetail { block: summary(engine, &snapshot, &mut Names::new(), &row).await?, numbers })
}

/// What the blocks page shows at first: the caller's blocks, the one in its address, the form for a new block when
/// the address carries the reserve page's choices, and what the last form post refused (taken from the session).
pub(crate) async fn page(
    numbering: &super::Numbering,
    caller: &Caller,
    session: &tower_sessions::Session,
    chosen: &crate::contract::forms::ReserveChoices,
    block: Option<&str>,
    lang: crate::contract::Lang,
) -> Result<crate::contract::BlocksPageData, AppError> {
    use crate::contract::NewBlock;
    let engine = &numbering.engine;
    let blocks = list(engine, caller).await?;
    let selected = match block {
        Some(id) => Some(detail(engine, caller, id).await.map_err(|e| e.api_error(lang))),
        None => None,
    };
    let new_block = match (chosen.project, chosen.correspondence_type) {
        (Some(_), Some(_)) => {
            let first = super::preview(numbering, caller, &chosen.request_of_every_part()).await.map_err(|e| e.api_error(lang));
            Some(NewBlock { choices: chosen.clone(), first })
        }
        _ => None,
    };
    let refusal = session.remove(forms::REFUSAL_KEY).await.map_err(|e| AppError::internal_from("session store", e))?;
    Ok(crate::contract::BlocksPageData { blocks, selected, new_block, refusal })
}

/// The blocks page's plain HTML forms (`/forms/block/…`), which work with and without the browser bundle: each
/// answers `303 See Other` back to the block (or to the form, with the refusal kept in the session for the page).
pub(crate) mod forms {
    use std::sync::Arc;

    use axum::extract::{FromRef, State};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;
    use axum::Router;
    use chrono::{DateTime, NaiveDate, Utc};
    use tower_sessions::Session;

    use super::super::forms::{choices, field, refusal, see_other, Fields, Posted};
    use super::super::{BlockAsk, Numbering};
    use crate::contract::forms::path;
    use crate::contract::messages::NumberingDetail;
    use crate::contract::{block_address, BLOCK_FIELD};
    use crate::server::auth::Access;
    use crate::server::error::{echo, AppError};

    /// The session's key of what the last post refused, for the blocks page.
    pub(crate) const REFUSAL_KEY: &str = "blocks.refusal";

    pub(crate) fn router<S>() -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
        Arc<Access>: FromRef<S>,
        Arc<Numbering>: FromRef<S>,
    {
        Router::new().route(path::BLOCK_RESERVE, post(reserve)).route(path::BLOCK_CONFIRM, post(confirm)).route(path::BLOCK_CANCEL, post(cancel))
    }

    /// Back to `address`, keeping the refusal (if any) for the page to say once.
    async fn back(session: &Session, address: &str, refused: Option<crate::contract::ApiError>) -> Response {
        if let Some(r) = refused {
            if let Err(e) = session.insert(REFUSAL_KEY, &r).await {
                return AppError::internal_from("session store", e).into_response();
            }
        }
        see_other(address)
    }

    /// A date field (`YYYY-MM-DD`, as `<input type="date">` sends it): held until the end of that day in Bangkok.
    fn end_of_day_in_bangkok(date: &str) -> Result<DateTime<Utc>, AppError> {
        let day = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d")
            .map_err(|_| AppError::validation(NumberingDetail::BlockHoldNotADate { given: &echo(date) }))?;
        let next =
            day.succ_opt().and_then(|d| d.and_hms_opt(0, 0, 0)).ok_or_else(|| AppError::validation(NumberingDetail::BlockHoldDateOutOfRange))?;
        // Thailand keeps +07:00 all year
        Ok(DateTime::<Utc>::from_naive_utc_and_offset(next - chrono::Duration::hours(7), Utc))
    }

    fn block_ask(fields: &Fields) -> Result<BlockAsk, AppError> {
        let count = field(fields, "count").unwrap_or_default();
        let count = count.trim().parse::<i64>().map_err(|_| AppError::validation(NumberingDetail::BlockCountNotWhole { given: &echo(&count) }))?;
        let hold_until = field(fields, "holdUntil").filter(|d| !d.trim().is_empty()).map(|d| end_of_day_in_bangkok(&d)).transpose()?;
        let holder = field(fields, "holder").map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
        Ok(BlockAsk { count, hold_until, holder })
    }

    async fn reserve(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
        let chosen = choices(&fields);
        let taken = match block_ask(&fields) {
            Ok(ask) => super::super::reserve_block(&s, &caller, &chosen.request_of_every_part(), &ask, None).await,
            Err(e) => Err(e),
        };
        match taken {
            Ok(block) => back(&session, &block_address(&block.block_id), None).await,
            Err(e) => back(&session, &chosen.address_on(path::BLOCKS), refusal(&e, lang)).await,
        }
    }

    async fn confirm(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
        let (token, document_id) = (field(&fields, "token").unwrap_or_default(), field(&fields, "documentId").unwrap_or_default());
        let done = super::super::confirm(&s, &caller, &token, &document_id, None).await;
        back(&session, &block_address(&field(&fields, BLOCK_FIELD).unwrap_or_default()), done.err().and_then(|e| refusal(&e, lang))).await
    }

    async fn cancel(State(s): State<Arc<Numbering>>, session: Session, Posted { caller, fields, lang }: Posted) -> Response {
        let token = field(&fields, "token").unwrap_or_default();
        let reason = field(&fields, "reason").filter(|r| !r.trim().is_empty());
        let done = super::super::cancel(&s, &caller, &token, reason.as_deref(), None).await;
        back(&session, &block_address(&field(&fields, BLOCK_FIELD).unwrap_or_default()), done.err().and_then(|e| refusal(&e, lang))).await
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_hold_date_ends_at_midnight_in_bangkok() {
            assert_eq!(end_of_day_in_bangkok("2026-12-05").unwrap().to_rfc3339(), "2026-12-05T17:00:00+00:00");
            assert_eq!(end_of_day_in_bangkok(" 2026-12-31 ").unwrap().to_rfc3339(), "2026-12-31T17:00:00+00:00");
            assert!(end_of_day_in_bangkok("5/12/2026").is_err());
        }
    }
}
