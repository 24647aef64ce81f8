//! `/account` — the logged-in user's own password (the current one, then the new one twice).

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{AdminContext, AdminPage, ErrorSlot};
use crate::contract::users::MIN_PASSWORD_CHARS;
use crate::contract::Role;

#[component]
pub fn AccountPage() -> impl IntoView {
    view! {
        <AdminPage title="account.title" min_role=Role::Staff reference=false content=|ctx: AdminContext| view! {
            <p class="muted" data-testid="account-user">{ctx.user.username.clone()}" · "{ctx.user.role.as_str()}</p>
            <PasswordForm/>
        }/>
    }
}

#[component]
fn PasswordForm() -> impl IntoView {
    let i18n = use_i18n();
    let current = RwSignal::new(String::new());
    let new = RwSignal::new(String::new());
    let again = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let saved = RwSignal::new(false);

    let change = Action::new(move |(c, n): &(String, String)| {
        let (c, n) = (c.clone(), n.clone());
        async move {
            match api::change_password(c, n).await {
                Ok(()) => {
                    saved.set(true);
                    current.set(String::new());
                    new.set(String::new());
                    again.set(String::new());
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });
    let mismatch = move || again.with(|a| !a.is_empty()) && new.get() != again.get();
    let too_short = move || new.with(|n| !n.is_empty() && n.chars().count() < MIN_PASSWORD_CHARS);

    view! {
        <form class="password-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            error.set(None);
            saved.set(false);
            change.dispatch((current.get_untracked(), new.get_untracked()));
        }>
            <label class="field">
                <span>{move || i18n.t("account.current")}</span>
                <input type="password" autocomplete="current-password" required data-testid="account-current"
                    prop:value=move || current.get() on:input=move |ev| current.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("account.new")}</span>
                <input type="password" autocomplete="new-password" required data-testid="account-new"
                    prop:value=move || new.get() on:input=move |ev| new.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("account.again")}</span>
                <input type="password" autocomplete="new-password" required data-testid="account-again"
                    prop:value=move || again.get() on:input=move |ev| again.set(event_target_value(&ev))/>
            </label>
            {move || too_short().then(|| view! { <p class="muted small" data-testid="account-too-short">{i18n.t("account.too_short")}</p> })}
            {move || mismatch().then(|| view! { <p class="muted small" data-testid="account-mismatch">{i18n.t("account.mismatch")}</p> })}
            <button type="submit" class="primary" data-testid="account-submit"
                disabled=move || change.pending().get() || mismatch() || too_short() || current.with(String::is_empty) || again.with(String::is_empty)>
                {move || i18n.t("account.submit")}
            </button>
        </form>
        <ErrorSlot error/>
        {move || saved.get().then(|| view! { <p class="ok" data-testid="account-saved">{i18n.t("account.saved")}</p> })}
    }
}
