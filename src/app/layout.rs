//! The header: app name, navigation, user, logout, language switch.

use leptos::prelude::*;
use leptos_router::components::A;

use super::api;
use super::i18n::use_i18n;
use super::use_current_user;

#[component]
pub fn Header() -> impl IntoView {
    let i18n = use_i18n();
    let current = use_current_user();
    let user = current.resource;

    // a form, so that the switch works on the pages the bundle does not hydrate; once hydrated it switches in place
    let switch_lang = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        i18n.set(i18n.lang.get_untracked().other());
    };
    // the reserve page is loaded whole from every page (`rel="external"`): it is the server's HTML with the staff
    // script, never rendered by the router here
    // under 640 px the links fold into a menu (style/main.css); a page change folds it again
    let menu_open = RwSignal::new(false);
    // "more" closes when one of its pages is chosen (a page change keeps the header)
    let more = NodeRef::<leptos::html::Details>::new();
    let close_more = move || {
        if let Some(details) = more.get_untracked() {
            let _ = details.remove_attribute("open");
        }
    };
    let location = leptos_router::hooks::use_location();
    // this page's address, for the language switch to come back to
    let here = move || {
        let (path, search) = (location.pathname.get(), location.search.get());
        match search.trim_start_matches('?') {
            "" => path,
            query => format!("{path}?{query}"),
        }
    };
    Effect::new(move |_| {
        location.pathname.track();
        menu_open.set(false);
    });

    view! {
        <header class="topbar">
            <a class="brand" href="/" rel="external">{move || i18n.t("app.name")}</a>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match user.await {
                        Ok(Some(u)) => {
                            let is_admin = u.is_admin();
                            let is_super = u.role == crate::contract::Role::SuperAdmin;
                            let display = if u.display_name.trim().is_empty() { u.username.clone() } else { u.display_name.clone() };
                            view! {
                                <Show when=move || is_super>
                                    {if super::page_script() == super::PageScript::Bundle {
                                        view! { <WaitingBadge/> }.into_any()
                                    } else {
                                        view! { <WaitingBadgeDrawn/> }.into_any()
                                    }}
                                </Show>
                                <button type="button" class="menu-toggle" data-testid="menu-toggle" aria-controls="main-menu"
                                    aria-expanded=move || menu_open.get().to_string()
                                    on:click=move |_| menu_open.update(|o| *o = !*o)>
                                    "☰ "{move || i18n.t("nav.menu")}
                                </button>
                                <div class="menu" id="main-menu" class:open=move || menu_open.get()>
                                // a page chosen folds the menus; opening "more" (its summary) does not
                                <nav class="nav" on:click=move |ev| if !on_summary(&ev) { menu_open.set(false); close_more(); }>
                                    <A href="/" attr:rel="external" attr:data-testid="nav-reserve">{move || i18n.t("nav.reserve")}</A>
                                    <A href="/blocks" attr:data-testid="nav-blocks">{move || i18n.t("nav.blocks")}</A>
                                    // the pages admins use every day; the rest under "more" (a native disclosure: it
                                    // opens without scripts too), so that the bar stays one line at a desk
                                    <Show when=move || is_admin>
                                        <A href="/templates" attr:data-testid="nav-templates">{move || i18n.t("nav.templates")}</A>
                                        <A href="/counters" attr:data-testid="nav-counters">{move || i18n.t("nav.counters")}</A>
                                        <A href="/audit" attr:data-testid="nav-audit">{move || i18n.t("nav.audit")}</A>
                                    </Show>
                                    <Show when=move || is_super>
                                        <A href="/resets" attr:data-testid="nav-resets">{move || i18n.t("nav.resets")}</A>
                                    </Show>
                                    <Show when=move || is_admin>
                                        <details class="more-menu" node_ref=more data-testid="nav-more">
                                            <summary>{move || i18n.t("nav.more")}</summary>
                                            <div class="more-links">
                                                <A href="/charts" attr:data-testid="nav-charts">{move || i18n.t("nav.charts")}</A>
                                                <A href="/errors" attr:data-testid="nav-errors">{move || i18n.t("nav.errors")}</A>
                                                <A href="/tokens" attr:data-testid="nav-tokens">{move || i18n.t("nav.tokens")}</A>
                                                <Show when=move || is_super>
                                                    <A href="/reference" attr:data-testid="nav-reference">{move || i18n.t("nav.reference")}</A>
                                                    <A href="/import" attr:data-testid="nav-import">{move || i18n.t("nav.import")}</A>
                                                    <A href="/users" attr:data-testid="nav-users">{move || i18n.t("nav.users")}</A>
                                                    <A href="/logins" attr:data-testid="nav-logins">{move || i18n.t("nav.logins")}</A>
                                                    <A href="/notifications" attr:data-testid="nav-notifications">{move || i18n.t("nav.notifications")}</A>
                                                </Show>
                                            </div>
                                        </details>
                                    </Show>
                                </nav>
                                <A href="/account" attr:class="user" attr:data-testid="user-name" attr:title=move || i18n.t("nav.account.title")>{display}</A>
                                // a plain form on every page: the answer is the login page, loaded whole
                                <form method="post" action=crate::contract::forms::path::LOGOUT class="logout">
                                    <button type="submit" class="link" data-testid="logout">
                                        {move || i18n.t("nav.logout")}
                                    </button>
                                </form>
                                </div>
                            }.into_any()
                        }
                        _ => ().into_any(),
                    }
                })}
            </Transition>
            <form method="post" action=crate::contract::forms::path::LANG class="lang-form" on:submit=switch_lang>
                <input type="hidden" name="lang" value=move || i18n.lang.get().other().code()/>
                <input type="hidden" name="back" value=here/>
                <button type="submit" class="lang" data-testid="lang-switch" title=move || i18n.t("nav.switch.title")>
                    {move || i18n.t("nav.switch")}
                </button>
            </form>
        </header>
    }
}

/// What waits for the viewer (a super admin: reset requests another one made), as a count linking to `/resets`;
/// nothing at 0. On a hydrated page it is read in the browser only, after hydration and again on each page change (an
/// approval elsewhere shows on the next click): a count rendered by the server inside the header's own suspense could
/// differ from the hydrating one's and break the page's hydration.
#[component]
fn WaitingBadge() -> impl IntoView {
    let location = leptos_router::hooks::use_location();
    let count = RwSignal::new(0i64);
    // effects run in the browser only
    Effect::new(move |_| {
        location.pathname.track();
        leptos::task::spawn_local(async move {
            if let Ok(w) = api::waiting_for_me().await {
                count.set(w.reset_requests);
            }
        });
    });
    move || waiting_link(count.get())
}

/// The same count on a page the Leptos bundle never hydrates (the staff pages): drawn by the server as it renders.
#[component]
fn WaitingBadgeDrawn() -> impl IntoView {
    let waiting = Resource::new(|| (), |_| api::waiting_for_me());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move { waiting.await.ok().and_then(|w| waiting_link(w.reset_requests)) })}
        </Suspense>
    }
}

fn waiting_link(n: i64) -> Option<impl IntoView> {
    let i18n = use_i18n();
    (n > 0).then(|| {
        view! {
            <A href="/resets" attr:class="waiting" attr:data-testid="waiting-badge"
                attr:title=move || i18n.t("nav.waiting.title")
                attr:aria-label=move || format!("{}: {n}", i18n.t("nav.waiting.title"))>
                {n.to_string()}
            </A>
        }
    })
}

/// Whether a click fell on a disclosure's summary (which opens it) rather than on a link.
fn on_summary(ev: &leptos::ev::MouseEvent) -> bool {
    use wasm_bindgen::JsCast;
    ev.target().and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok()).and_then(|el| el.closest("summary").ok().flatten()).is_some()
}
