//! `/blocks` — blocks of numbers taken in advance (a site office's, a subcontractor's): a new block for the reserve
//! page's choices, the caller's blocks with how far each is used, and one block's numbers, each confirmed or
//! cancelled on its own. Plain HTML forms that post to `/forms/block/…` and come back here, with or without the
//! browser bundle; what the server allows (tokens, `availableActions`) decides which forms a number gets.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{bangkok_time, status_key, ErrorBox, NumberText, RequireUser, TableHead, TableWrap};
use crate::contract::forms::{path, ReserveChoices};
use crate::contract::{
    block_address, BlockDetail, BlockNumber, BlockSummary, BlocksPageData, NewBlock, BLOCK_FIELD, MAX_BLOCK, MAX_BLOCK_HOLD_DAYS, MIN_BLOCK,
};

#[component]
pub fn BlocksPage() -> impl IntoView {
    let i18n = use_i18n();
    let (choices, block) = use_query_map().with_untracked(|q| (ReserveChoices::from_fields(|name| q.get(name)), q.get(BLOCK_FIELD)));
    let page = Resource::new(|| (), move |_| api::blocks_page(choices.clone(), block.clone()));
    view! {
        <RequireUser content=move |_user| view! {
            <section class="card">
                <h1>{move || i18n.t("blocks.title")}</h1>
                <p class="muted">{move || i18n.t("blocks.intro")}</p>
                <Suspense fallback=move || view! { <p class="muted">{move || i18n.t("common.loading")}</p> }>
                    {move || Suspend::new(async move {
                        match page.await {
                            Ok(data) => view! { <Blocks data/> }.into_any(),
                            Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                        }
                    })}
                </Suspense>
            </section>
        }/>
    }
}

#[component]
fn Blocks(data: BlocksPageData) -> impl IntoView {
    let i18n = use_i18n();
    let BlocksPageData { blocks, selected, new_block, refusal } = data;
    view! {
        {refusal.map(|e| view! { <ErrorBox message=error_text(&e)/> })}
        {match new_block {
            Some(n) => view! { <NewBlockForm n/> }.into_any(),
            None => view! {
                <p class="small" data-testid="block-how">
                    {move || i18n.t("blocks.how")}" "<a href="/" rel="external">{move || i18n.t("nav.reserve")}</a>
                </p>
            }.into_any(),
        }}
        {selected.map(|s| match s {
            Ok(detail) => view! { <BlockView detail/> }.into_any(),
            Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
        })}
        <h2>{move || i18n.t("blocks.list")}</h2>
        <BlockList blocks/>
    }
}

/// The form for a block of the reserve page's choices: how many, for whom, until when.
#[component]
fn NewBlockForm(n: NewBlock) -> impl IntoView {
    let i18n = use_i18n();
    let hidden = n.choices.fields().into_iter().map(|(name, value)| view! { <input type="hidden" name=name value=value/> }).collect_view();
    let first = match n.first {
        Ok(p) => view! {
            <p>{move || i18n.t("blocks.first")}": "<strong class="mono" data-testid="block-first"><NumberText text=p.document_number/></strong></p>
        }
        .into_any(),
        Err(e) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
    };
    view! {
        <form method="post" action=path::BLOCK_RESERVE class="block-form" data-testid="block-form">
            <h2>{move || i18n.t("blocks.new")}</h2>
            {first}
            {hidden}
            <div class="form-row">
                <label class="field">
                    <span>{move || i18n.t("blocks.count")}</span>
                    <input type="number" name="count" data-testid="block-count" required min=MIN_BLOCK max=MAX_BLOCK value="10"/>
                </label>
                <label class="field grow">
                    <span>{move || i18n.t("blocks.holder")}</span>
                    <input type="text" name="holder" data-testid="block-holder" maxlength="200"/>
                </label>
                <label class="field">
                    <span>{move || i18n.t("blocks.hold_until")}</span>
                    <input type="date" name="holdUntil" data-testid="block-hold-until"/>
                </label>
            </div>
            <p class="small muted">{move || i18n.t("blocks.limits").replace("{max}", &MAX_BLOCK.to_string()).replace("{days}", &MAX_BLOCK_HOLD_DAYS.to_string())}</p>
            <button type="submit" class="primary" data-testid="block-reserve">{move || i18n.t("blocks.reserve")}</button>
        </form>
    }
}

#[component]
fn BlockList(blocks: Vec<BlockSummary>) -> impl IntoView {
    let i18n = use_i18n();
    if blocks.is_empty() {
        return view! { <p class="muted" data-testid="blocks-none">{move || i18n.t("blocks.none")}</p> }.into_any();
    }
    view! {
        <TableWrap label="blocks.list"><table class="list cards" data-testid="block-table">
            <TableHead columns=vec!["blocks.col.range", "blocks.col.counter", "blocks.holder", "blocks.col.use", "blocks.hold_until", "blocks.col.by"]/>
            <tbody>
                {blocks.into_iter().map(|b| view! {
                    <tr data-testid="block-row" data-block=b.block_id.clone() data-count=b.count.to_string()>
                        <td class="mono" data-label=move || i18n.t("blocks.col.range")>
                            <a href=block_address(&b.block_id) data-testid="block-open">{b.first_number.clone()}" – "{b.last_number.clone()}</a>
                        </td>
                        <td data-label=move || i18n.t("blocks.col.counter")>{format!("{} · {}", b.project_code, b.correspondence_type_code)}</td>
                        <td data-label=move || i18n.t("blocks.holder")>{b.holder.clone()}</td>
                        <td class="small" data-testid="block-use" data-label=move || i18n.t("blocks.col.use")>
                            <BlockUse b=b.clone()/>
                        </td>
                        <td class="nowrap small" data-label=move || i18n.t("blocks.hold_until")>{bangkok_time(&b.hold_until)}</td>
                        <td class="small" data-label=move || i18n.t("blocks.col.by")>{b.reserved_by.clone()}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
    .into_any()
}

/// How many of a block's numbers stand where, in words.
#[component]
fn BlockUse(b: BlockSummary) -> impl IntoView {
    let i18n = use_i18n();
    let parts = [("blocks.held", b.held), ("blocks.confirmed", b.confirmed), ("blocks.cancelled", b.cancelled), ("blocks.expired", b.expired)];
    let shown: Vec<_> = parts.into_iter().filter(|(_, n)| *n > 0).collect();
    view! {
        <span data-held=b.held data-confirmed=b.confirmed data-cancelled=b.cancelled data-expired=b.expired>
            {move || shown.iter().map(|(key, n)| format!("{} {n}", i18n.t(key))).collect::<Vec<_>>().join(" · ")}
        </span>
    }
}

#[component]
fn BlockView(detail: BlockDetail) -> impl IntoView {
    let i18n = use_i18n();
    let BlockDetail { block, numbers } = detail;
    let id = block.block_id.clone();
    view! {
        <section class="block-detail" data-testid="block-detail" data-block=block.block_id.clone()>
            <h2>{move || i18n.t("blocks.one")}" "<span class="mono">{block.first_number.clone()}" – "{block.last_number.clone()}</span></h2>
            <p class="small">
                {format!("{} · {}", block.project_code, block.correspondence_type_code)}
                {block.holder.clone().map(|h| format!(" · {h}"))}
                " · "{move || i18n.t("blocks.hold_until")}" "{bangkok_time(&block.hold_until)}
                " · "<BlockUse b=block.clone()/>
            </p>
            <TableWrap label="blocks.one"><table class="list" data-testid="block-numbers">
                <TableHead columns=vec!["ctr.col.seq", "ctr.col.number", "ctr.col.status", "ctr.col.document", ""]/>
                <tbody>
                    {numbers.into_iter().map(|n| view! { <BlockNumberRow n block=id.clone()/> }).collect_view()}
                </tbody>
            </table></TableWrap>
        </section>
    }
}

/// A number of the block; for its reserver, while it is held, the forms that confirm or cancel it.
#[component]
fn BlockNumberRow(n: BlockNumber, block: String) -> impl IntoView {
    let i18n = use_i18n();
    let may = |a: &str| n.available_actions.iter().any(|x| x == a);
    let token = n.token.clone().unwrap_or_default();
    let confirm = (may("CONFIRM") && n.token.is_some()).then(|| {
        let (token, block) = (token.clone(), block.clone());
        view! {
            <form method="post" action=path::BLOCK_CONFIRM class="inline-form" data-testid="block-confirm-form">
                <input type="hidden" name="token" value=token/>
                <input type="hidden" name=BLOCK_FIELD value=block/>
                <input type="text" name="documentId" required maxlength="100" data-testid="block-document-id"
                    placeholder=move || i18n.t("reserve.document_id") aria-label=move || i18n.t("reserve.document_id")/>
                <button type="submit" class="primary small" data-testid="block-confirm">{move || i18n.t("reserve.confirm")}</button>
            </form>
        }
    });
    let cancel = (may("CANCEL") && n.token.is_some()).then(|| {
        view! {
            <form method="post" action=path::BLOCK_CANCEL class="inline-form" data-testid="block-cancel-form">
                <input type="hidden" name="token" value=token/>
                <input type="hidden" name=BLOCK_FIELD value=block/>
                <button type="submit" class="danger small" data-testid="block-cancel">{move || i18n.t("reserve.cancel")}</button>
            </form>
        }
    });
    let status = n.status;
    view! {
        <tr data-testid="block-number" data-sequence=n.sequence.to_string() data-status=status.as_str() data-number=n.document_number.clone()>
            <td>{n.sequence}</td>
            <td class="mono">{n.document_number.clone()}</td>
            <td>{move || i18n.t(status_key(status))}{n.cancel_reason.clone().map(|r| format!(" ({r})"))}</td>
            <td class="small">{n.document_id.clone()}</td>
            <td class="actions">{confirm}{cancel}</td>
        </tr>
    }
}
