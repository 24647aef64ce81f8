//! `/login`: a plain HTML form that posts to `/forms/login` (`server::auth::forms`). The page loads no browser bundle
//! (`PAGES_WITHOUT_BUNDLE`): the server's HTML is all of it, with the refusal of the last attempt, once.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::ErrorBox;

#[component]
pub fn LoginPage() -> impl IntoView {
    let i18n = use_i18n();
    // a login this browser posted that was refused: why, once. A resource, as the page's other reads: a read awaited
    // straight in the page's suspense left one render in three waiting for good when a session came with the request
    let refusal = Resource::new(|| (), |_| api::login_refusal());

    view! {
        <section class="card narrow">
            <h1>{move || i18n.t("login.title")}</h1>
            <form method="post" action=crate::contract::forms::path::LOGIN>
                <label>
                    <span>{move || i18n.t("login.username")}</span>
                    <input type="text" name="username" autocomplete="username" required data-testid="login-username"/>
                </label>
                <label>
                    <span>{move || i18n.t("login.password")}</span>
                    <input type="password" name="password" autocomplete="current-password" required data-testid="login-password"/>
                </label>
                <button type="submit" class="primary" data-testid="login-submit">{move || i18n.t("login.submit")}</button>
            </form>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match refusal.await {
                        Ok(Some(e)) => view! { <ErrorBox message=error_text(&e)/> }.into_any(),
                        _ => ().into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}
