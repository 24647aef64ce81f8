//! The web app (docs/rules/api.md#web-app): the HTML shell, the router and the pages. Every rule comes from
//! `crate::numbering` (templates) or the server (through `api`); the UI only shows and asks.

pub mod api;

mod audit;
mod blocks;
pub mod browser;
mod diff;
mod errors;
pub mod i18n;
mod layout;
// the live screens: one event stream per page shown (hydrate only)
mod live;
mod login;
mod reserve;
mod templates;
mod tokens;
mod widgets;
// admin pages: counters, reset requests
mod counters;
mod resets;
// the numbering in pictures: issued per day, counters' utilization
mod chart;
mod charts;
// imports and reference-data admin
mod import;
mod reference;
// users and one's own password
mod account;
mod users;
// login attempts (super admins)
mod logins;
mod notifications;
// anyone checks a receipt
mod verify;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    lazy_route, path, Lazy, LazyRoute, SsrMode,
};

use crate::contract::{ApiError, UserInfo};
use i18n::{provide_i18n, use_i18n};

/// The stylesheet's address, provided by the server's router: `/pkg/docnum.<hash>.css` in a production build
/// (the name changes with the content; `server::bundle`), `/pkg/docnum.css` in a debug build.
#[derive(Clone, Debug)]
pub struct StylesheetHref(pub std::sync::Arc<str>);

/// The HTML document the server renders around the app. Only `<body>` is hydrated: the stylesheet link here is
/// the server's alone, so the browser bundle need not know the hashed name.
pub fn shell(options: leptos::config::LeptosOptions) -> impl IntoView {
    let stylesheet = use_context::<StylesheetHref>()
        .map(|h| h.0.to_string())
        .unwrap_or_else(|| format!("/{}/{}.css", options.site_pkg_dir.trim_matches('/'), options.output_name));
    // the language of the words the page is rendered in (the visitor's cookie); the switch changes it in the browser
    let lang = i18n::initial_lang().code();
    view! {
        <!DOCTYPE html>
        <html lang=lang>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/x-icon" href="/favicon.ico"/>
                <link rel="stylesheet" id="leptos" href=stylesheet/>
                // without scripts the phone's menu cannot open: it stays open (public/noscript.css)
                <noscript><link rel="stylesheet" href="/noscript.css"/></noscript>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The pages anyone may open. Every other page needs a session: the server answers it with a `303` to `/login` for a
/// visitor without one before anything renders (`server::http::pages_need_a_session`).
pub const PAGES_WITHOUT_LOGIN: &[&str] = &["/login", "/verify"];

/// The logged-in user (None = not logged in), loaded on the server and sent to the browser.
#[derive(Clone, Copy)]
pub struct CurrentUser {
    pub resource: Resource<Result<Option<UserInfo>, ApiError>>,
    /// Bump to load the user again (after login / logout).
    pub version: RwSignal<u32>,
}

impl CurrentUser {
    pub fn reload(&self) {
        self.version.update(|v| *v += 1);
    }
}

pub fn use_current_user() -> CurrentUser {
    use_context::<CurrentUser>().expect("CurrentUser is provided by App")
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let i18n = provide_i18n();

    let version = RwSignal::new(0u32);
    let resource = Resource::new(move || version.get(), |_| api::current_user());
    provide_context(CurrentUser { resource, version });

    #[cfg(feature = "hydrate")]
    {
        Effect::new(move |_| browser::set_html_lang(i18n.lang.get().code()));
        // a marker for tests and scripts: the page is interactive from here on (a page in a chunk of its own is
        // marked by `crate::hydrate` once its view has hydrated too)
        Effect::new(move |_| crate::mark_hydrated(false));
    }

    view! {
        <Title text=move || i18n.t("app.name")/>
        <Router>
            <layout::Header/>
            <main class="page">
                <Routes fallback=|| view! { <NotFound/> }>
                    // the staff pages: rendered whole before the first byte (no streamed fragments that only a
                    // script puts in place), so that their forms work before and without the browser bundle; and
                    // what a form post left in the session is taken before the answer's headers go
                    <Route path=path!("/") view=reserve::ReservePage ssr=SsrMode::Async/>
                    <Route path=path!("/login") view=login::LoginPage ssr=SsrMode::Async/>
                    <Route path=path!("/blocks") view={Lazy::<BlocksRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/templates") view={Lazy::<TemplatesRoute>::new()}/>
                    <Route path=path!("/tokens") view={Lazy::<TokensRoute>::new()}/>
                    <Route path=path!("/audit") view={Lazy::<AuditRoute>::new()}/>
                    <Route path=path!("/errors") view={Lazy::<ErrorsRoute>::new()}/>
                    // admin pages: counters, reset requests
                    <Route path=path!("/counters") view={Lazy::<CountersRoute>::new()}/>
                    <Route path=path!("/resets") view={Lazy::<ResetsRoute>::new()}/>
                    <Route path=path!("/charts") view={Lazy::<ChartsRoute>::new()}/>
                    // imports and reference-data admin
                    <Route path=path!("/reference") view={Lazy::<ReferenceRoute>::new()}/>
                    <Route path=path!("/import") view={Lazy::<ImportRoute>::new()}/>
                    // users and one's own password
                    <Route path=path!("/users") view={Lazy::<UsersRoute>::new()}/>
                    <Route path=path!("/account") view={Lazy::<AccountRoute>::new()}/>
                    <Route path=path!("/logins") view={Lazy::<LoginsRoute>::new()}/>
                    <Route path=path!("/notifications") view={Lazy::<NotificationsRoute>::new()}/>
                    // public: anyone checks a receipt; rendered whole, so a link's answer shows without scripts
                    <Route path=path!("/verify") view={Lazy::<VerifyRoute>::new()} ssr=SsrMode::Async/>
                </Routes>
            </main>
        </Router>
    }
}

/// A page whose code the browser loads when it is first visited, not with the first bundle: the staff pages
/// (`/`, `/login`) stay in the main module, every other page is a chunk of its own (`#[lazy]`, wasm-split;
/// docs/benchmarks/browser-bundle.md has the sizes).
macro_rules! lazy_page {
    ($($route:ident => $page:path),* $(,)?) => {$(
        struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> AnyView {
                $page().into_any()
            }
        }
    )*};
}

/// The addresses of the pages declared below, which hydrate only once their chunk is in (`crate::hydrate`).
pub const LAZY_PATHS: &[&str] = &[
    "/blocks",
    "/templates",
    "/tokens",
    "/audit",
    "/errors",
    "/counters",
    "/resets",
    "/charts",
    "/reference",
    "/import",
    "/users",
    "/account",
    "/logins",
    "/notifications",
    "/verify",
];

lazy_page! {
    BlocksRoute => blocks::BlocksPage,
    TemplatesRoute => templates::TemplatesPage,
    TokensRoute => tokens::TokensPage,
    AuditRoute => audit::AuditPage,
    ErrorsRoute => errors::ErrorsPage,
    CountersRoute => counters::CountersPage,
    ResetsRoute => resets::ResetsPage,
    ChartsRoute => charts::ChartsPage,
    ReferenceRoute => reference::ReferencePage,
    ImportRoute => import::ImportPage,
    UsersRoute => users::UsersPage,
    AccountRoute => account::AccountPage,
    LoginsRoute => logins::LoginsPage,
    NotificationsRoute => notifications::NotificationsPage,
    VerifyRoute => verify::VerifyPage,
}

#[component]
fn NotFound() -> impl IntoView {
    let i18n = use_i18n();
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! { <h1>{move || i18n.t("common.not_found")}</h1> }
}
