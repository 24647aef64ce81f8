//! `/tokens` — API tokens for machine clients (admins): list, create (secret shown once), revoke. A project admin
//! sees only the tokens of the projects they administer (the server decides).

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{bangkok_time, client_fetch, AdminContext, AdminPage, ErrorBox, ErrorSlot, SecretOnce, TableHead, TableWrap};
use crate::contract::*;

#[component]
pub fn TokensPage() -> impl IntoView {
    view! {
        <AdminPage title="tokens.title" content=|ctx: AdminContext| view! { <Tokens projects=ctx.data.projects/> }/>
    }
}

#[component]
fn Tokens(projects: Vec<ProjectItem>) -> impl IntoView {
    let i18n = use_i18n();
    let projects = StoredValue::new(projects);

    let version = RwSignal::new(0u32);
    let list = client_fetch(move || {
        version.track();
        async move { api::list_api_tokens().await.map_err(|e| error_text(&e)) }
    });

    let error = RwSignal::new(None::<String>);
    let created = RwSignal::new(None::<CreatedApiToken>);

    let revoke = Action::new(move |id: &ApiTokenId| {
        let id = *id;
        async move {
            if let Err(e) = api::revoke_api_token(id).await {
                error.set(Some(error_text(&e)));
            }
            version.update(|v| *v += 1);
        }
    });

    view! {
        <TokenForm projects error created version/>
        <ErrorSlot error/>

        {move || created.get().map(|tok| view! { <SecretOnce secret=tok.token words="tokens.secret" testid="token"/> })}

        <h2>{move || i18n.t("tokens.list")}</h2>
        {move || match list.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(r) => match r {
                Err(m) => view! { <ErrorBox message=m/> }.into_any(),
                Ok(tokens) if tokens.is_empty() => view! { <p class="muted" data-testid="token-empty">{move || i18n.t("tokens.empty")}</p> }.into_any(),
                Ok(tokens) => view! { <TokenTable tokens projects revoke error/> }.into_any(),
            },
        }}
    }
}

/// A new token: its name and the projects it may use (none = all).
#[component]
fn TokenForm(
    projects: StoredValue<Vec<ProjectItem>>,
    error: RwSignal<Option<String>>,
    created: RwSignal<Option<CreatedApiToken>>,
    /// Bumped after a create (reloads the list).
    version: RwSignal<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let name = RwSignal::new(String::new());
    let chosen = RwSignal::new(Vec::<ProjectId>::new());
    let create = Action::new(move |(n, ids): &(String, Vec<ProjectId>)| {
        let (n, ids) = (n.clone(), ids.clone());
        async move {
            match api::create_api_token(n, ids).await {
                Ok(tok) => {
                    created.set(Some(tok));
                    name.set(String::new());
                    chosen.set(Vec::new());
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            version.update(|v| *v += 1);
        }
    });
    view! {
        <form class="token-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            error.set(None);
            created.set(None);
            create.dispatch((name.get_untracked().trim().to_string(), chosen.get_untracked()));
        }>
            <label class="field">
                <span>{move || i18n.t("tokens.name")}</span>
                <input type="text" required maxlength="100" data-testid="token-name"
                    prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))/>
            </label>
            <fieldset class="checks">
                <legend>{move || i18n.t("tokens.projects")}</legend>
                {projects.with_value(|ps| ps.iter().map(|p| {
                    let id = p.id;
                    let code = p.code.clone();
                    view! {
                        <label class="check">
                            <input type="checkbox" data-testid="token-project" data-code=code.clone()
                                prop:checked=move || chosen.with(|c| c.contains(&id))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    chosen.update(|c| {
                                        c.retain(|x| *x != id);
                                        if on { c.push(id) }
                                    });
                                }/>
                            {code}
                        </label>
                    }
                }).collect_view())}
            </fieldset>
            <button type="submit" class="primary" data-testid="token-create"
                disabled=move || create.pending().get() || name.with(|n| n.trim().is_empty())>
                {move || i18n.t("tokens.create")}
            </button>
        </form>
    }
}

/// The tokens, each with its scope and state, and a revoke button while it is active.
#[component]
fn TokenTable(
    tokens: Vec<ApiTokenInfo>,
    projects: StoredValue<Vec<ProjectItem>>,
    revoke: Action<ApiTokenId, ()>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let i18n = use_i18n();
    let project_code =
        move |id: ProjectId| projects.with_value(|ps| ps.iter().find(|p| p.id == id).map(|p| p.code.clone()).unwrap_or_else(|| format!("#{id}")));

    view! {
        <TableWrap><table class="list" data-testid="token-table">
            <TableHead columns=vec!["tokens.name", "tokens.prefix", "tokens.scope", "tokens.created", "tokens.state", ""]/>
            <tbody>
                {tokens.into_iter().map(|t| {
                    let id = t.id;
                    let revoked = t.revoked_at.is_some();
                    let unreadable = t.scope_unreadable;
                    let scope = if t.project_ids.is_empty() {
                        None
                    } else {
                        Some(t.project_ids.iter().map(|p| project_code(*p)).collect::<Vec<_>>().join(", "))
                    };
                    view! {
                        <tr data-testid="token-row" data-token-id=id.to_string() class:revoked=revoked>
                            <td>{t.name.clone()}</td>
                            <td><code>{t.prefix.clone()}"…"</code></td>
                            <td data-testid="token-scope">{move || match (&scope, unreadable) {
                                (_, true) => i18n.t("tokens.unreadable").to_string(),
                                (Some(s), false) => s.clone(),
                                (None, false) => i18n.t("tokens.all_projects").to_string(),
                            }}</td>
                            <td data-testid="token-created-at">{bangkok_time(&t.created_at)}" · "{t.created_by.clone()}</td>
                            <td data-testid="token-state">{move || if revoked { i18n.t("tokens.revoked") } else { i18n.t("tokens.active") }}</td>
                            <td>
                                {(!revoked).then(|| view! {
                                    <button type="button" class="danger small" data-testid="token-revoke"
                                        disabled=move || revoke.pending().get()
                                        on:click=move |_| { error.set(None); revoke.dispatch(id); }>
                                        {move || i18n.t("tokens.revoke")}
                                    </button>
                                })}
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
}
