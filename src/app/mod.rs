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

/// Where the staff script's files are, without their endings (`/pkg/<hash>/staff`: `staff.js`, `staff_bg.wasm`),
/// provided by the server's router when the build made it (`server::bundle`).
#[derive(Clone, Debug)]
pub struct StaffScript(pub std::sync::Arc<str>);

/// What the browser loads to make a page live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageScript {
    /// The Leptos bundle, which hydrates the page (and loads its chunk).
    Bundle,
    /// The staff script alone: the page is the server's HTML with plain forms (ADR 0005).
    Staff,
    /// Nothing: the page's HTML is all of it.
    None,
}

impl PageScript {
    /// The reserve page is made live by the staff script, the login page by nothing; every other page hydrates.
    pub fn of(path: &str) -> PageScript {
        match path {
            "/" => PageScript::Staff,
            "/login" => PageScript::None,
            _ => PageScript::Bundle,
        }
    }
}

/// The HTML document the server renders around the app. Only `<body>` is hydrated: the stylesheet link here is
/// the server's alone, so the browser bundle need not know the hashed name.
pub fn shell(options: leptos::config::LeptosOptions) -> impl IntoView {
    let stylesheet = use_context::<StylesheetHref>()
        .map(|h| h.0.to_string())
        .unwrap_or_else(|| format!("/{}/{}.css", options.site_pkg_dir.trim_matches('/'), options.output_name));
    // the language of the words the page is rendered in (the visitor's cookie); the switch changes it in the browser
    let lang = i18n::initial_lang().code();
    let script = page_script();
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
                {match script {
                    PageScript::Bundle => view! {
                        <AutoReload options=options.clone()/>
                        <HydrationScripts options/>
                    }.into_any(),
                    PageScript::Staff => view! { <StaffScriptTags/> }.into_any(),
                    PageScript::None => ().into_any(),
                }}
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

/// The script of the page being rendered (on the server; in the browser only hydrated pages render, so `Bundle`).
pub(crate) fn page_script() -> PageScript {
    #[cfg(feature = "ssr")]
    if let Some(parts) = use_context::<axum::http::request::Parts>() {
        return PageScript::of(parts.uri.path());
    }
    PageScript::Bundle
}

/// The staff script, fetched as the page is read (its WASM too) and started once the page is there; nothing when
/// the build did not make it (the page works without it).
#[component]
fn StaffScriptTags() -> impl IntoView {
    let nonce = leptos::nonce::use_nonce();
    use_context::<StaffScript>().map(|StaffScript(base)| {
        let (js, wasm) = (format!("{base}.js"), format!("{base}_bg.wasm"));
        let start = format!("import start from '{js}';start({{module_or_path:'{wasm}'}});");
        view! {
            <link rel="modulepreload" href=js/>
            <link rel="preload" href=wasm r#as="fetch" r#type="application/wasm" crossorigin=""/>
            <script type="module" nonce=nonce>{start}</script>
        }
    })
}

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
                    // script puts in place), so that their forms work without the browser bundle, which they never
                    // load (`PageScript`); and what a form post left in the session is taken before the answer's
                    // headers go. In the browser's router they are chunks, reached only by a link from a hydrated page
                    <Route path=path!("/") view={Lazy::<ReserveRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/login") view={Lazy::<LoginRoute>::new()} ssr=SsrMode::Async/>
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

/// A page whose code the browser loads when it is first visited, not with the first bundle: every page is a chunk
/// of its own (`#[lazy]`, wasm-split; docs/benchmarks/browser-bundle.md has the sizes); the main module holds the
/// shell, the header and the router.
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

/// The addresses of the pages declared below that hydrate, which they do only once their chunk is in
/// (`crate::hydrate`); the staff pages never hydrate (`PageScript`).
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
    ReserveRoute => reserve::ReservePage,
    LoginRoute => login::LoginPage,
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
