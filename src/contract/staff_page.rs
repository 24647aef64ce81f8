//! What the reserve page's HTML tells the staff script (`staff/`, a crate of its own that compiles this file too),
//! which makes the page live without the Leptos bundle. The page (`app::reserve`) writes the markers; the script
//! reads them and holds no rule and no word of its own.
//!
//! Markers, each an attribute of the page:
//! - on the part the script replaces (`id` [`ROOT`]): `data-project` and `data-type`, the ids chosen (the live events
//!   that concern the page), and `data-events`, the live events' address;
//! - `data-without-script` on what only a page without scripts needs (the "show the parts" step): hidden;
//! - `<template data-with-script>`: put in place (the copy button, with `data-copy-text`);
//! - `<template data-copied>`, `<template data-copy-failed>`: what a copy did;
//! - `<template data-stale>` in the preview: shown when a live event changed the preview;
//! - `<template data-unreachable>`, `<template data-retry>`: a post that did not get through, and its retry;
//! - `data-ttl-seconds` on the countdown, `data-expired-label` on its words; `data-busy-label` on the reserve button.

/// The `id` of the part of the reserve page the script replaces with the server's new rendering of it.
pub const ROOT: &str = "reserve-root";

/// The script's file names in the bundle's folder (`<name>.js`, `<name>_bg.wasm`).
pub const SCRIPT_NAME: &str = "staff";
