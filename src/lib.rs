//! Document numbering service: one crate, two builds.
//! `numbering` (pure rules) and `app` (Leptos UI + server-function contract) compile into both the server
//! and the WASM bundle; `server` (storage, engine, HTTP) exists only with the `ssr` feature.

#![recursion_limit = "512"]

pub mod app;
pub mod numbering;

#[cfg(feature = "ssr")]
pub mod server;

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
