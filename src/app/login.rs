//! `/login`

use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::use_current_user;
use super::widgets::{ErrorBox, ErrorSlot};

#[component]
pub fn LoginPage() -> impl IntoView {
    let i18n = use_i18n();
    let current = use_current_user();
    let navigate = use_navigate();

    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);

    let login = Action::new(|(u, p): &(String, String)| api::login(u.clone(), p.clone()));
    Effect::new(move |_| match login.value().get() {
        Some(Ok(_)) => {
            error.set(None);
            current.reload();
            navigate("/", Default::default());
        }
        Some(Err(e)) => error.set(Some(error_text(&e))),
        None => {}
    });

    // a login posted before or without the browser bundle (`/forms/login`) that was refused: why, once
    let refusal = Resource::new(|| (), |_| api::login_refusal());

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        error.set(None);
        login.dispatch((username.get_untracked(), password.get_untracked()));
    };

    view! {
        <section class="card narrow">
            <h1>{move || i18n.t("login.title")}</h1>
            // without scripts (or before they load) the form posts itself; once hydrated, a server function does
            <form method="post" action=crate::contract::forms::path::LOGIN on:submit=submit>
                <label>
                    <span>{move || i18n.t("login.username")}</span>
                    <input type="text" name="username" autocomplete="username" required
                        data-testid="login-username"
                        prop:value=move || username.get()
                        on:input=move |ev| username.set(event_target_value(&ev))/>
                </label>
                <label>
                    <span>{move || i18n.t("login.password")}</span>
                    <input type="password" name="password" autocomplete="current-password" required
                        data-testid="login-password"
                        prop:value=move || password.get()
                        on:input=move |ev| password.set(event_target_value(&ev))/>
                </label>
                <button type="submit" class="primary" data-testid="login-submit"
                    disabled=move || login.pending().get()>
                    {move || if login.pending().get() { i18n.t("login.busy") } else { i18n.t("login.submit") }}
                </button>
            </form>
            <ErrorSlot error/>
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
