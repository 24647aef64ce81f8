//! Document numbering service: one crate, two builds.
//! `numbering` (pure rules), `contract` (the data, roles, statuses and error codes that REST, server functions
//! and pages exchange) and `app` (Leptos pages and server-function declarations) compile into both the server
//! and the WASM bundle; `server` (storage, engine, HTTP) exists only with the `ssr` feature and never imports
//! `app`, except for the router's SSR shell.

#![recursion_limit = "512"]

pub mod app;
pub mod contract;
pub mod numbering;
pub mod receipt;

#[cfg(feature = "ssr")]
pub mod server;

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // a page whose code is a chunk of its own hydrates once that chunk is in (asynchronously); every other page, the
    // staff's forms among them, at once, so that no tap falls between the page showing hydrated and its handlers
    let path = leptos::prelude::window().location().pathname().unwrap_or_default();
    if app::LAZY_PATHS.contains(&path.trim_end_matches('/')) {
        leptos::mount::hydrate_lazy(app::App);
    } else {
        leptos::mount::hydrate_body(app::App);
    }
}
