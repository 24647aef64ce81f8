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
    // asynchronous: a page first loaded at an address whose code is a chunk of its own waits for that chunk
    leptos::mount::hydrate_lazy(app::App);
}
