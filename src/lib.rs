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
    // staff's forms among them, at once, and what was entered before is handed to its handlers in the same task
    let path = leptos::prelude::window().location().pathname().unwrap_or_default();
    if app::LAZY_PATHS.contains(&path.trim_end_matches('/')) {
        leptos::mount::hydrate_lazy(app::App);
    } else {
        let entered = entered_before_hydration::collect();
        leptos::mount::hydrate_body(app::App);
        entered_before_hydration::replay(entered);
    }
}

/// Hydration sets every field to what the page's state holds, which knew nothing of what a person typed or chose while
/// the page was the server's HTML (the forms work before the bundle). So: note the fields that differ from the HTML
/// before hydrating, and afterwards put the values back and tell the page as a person's input would.
#[cfg(feature = "hydrate")]
mod entered_before_hydration {
    use wasm_bindgen::JsCast;
    use web_sys::{Element, Event, EventInit, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement};

    pub struct Entered(Element, String);

    pub fn collect() -> Vec<Entered> {
        let Some(fields) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector_all("input, select, textarea").ok()) else {
            return Vec::new();
        };
        (0..fields.length())
            .filter_map(|i| fields.item(i)?.dyn_into::<Element>().ok())
            .filter_map(|el| {
                let value = changed_value(&el)?;
                Some(Entered(el, value))
            })
            .collect()
    }

    fn changed_value(el: &Element) -> Option<String> {
        if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
            let kind = input.type_();
            let text_like = !matches!(kind.as_str(), "checkbox" | "radio" | "file" | "hidden" | "submit" | "button" | "reset" | "image");
            (text_like && input.value() != input.default_value()).then(|| input.value())
        } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
            let options = select.options();
            let default = (0..options.length())
                .find(|&i| options.item(i).and_then(|o| o.dyn_into::<HtmlOptionElement>().ok()).is_some_and(|o| o.default_selected()))
                .map_or(0, |i| i as i32);
            (select.selected_index() != default).then(|| select.value())
        } else {
            let area = el.dyn_ref::<HtmlTextAreaElement>()?;
            (Ok(area.value()) != area.default_value()).then(|| area.value())
        }
    }

    pub fn replay(entered: Vec<Entered>) {
        // in the page's order: a choice that others depend on (project → organizations) comes first
        for Entered(el, value) in entered {
            if !el.is_connected() {
                continue;
            }
            if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
                input.set_value(&value);
            } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
                select.set_value(&value);
            } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
                area.set_value(&value);
            }
            let init = EventInit::new();
            init.set_bubbles(true);
            for kind in ["input", "change"] {
                if let Ok(event) = Event::new_with_event_init_dict(kind, &init) {
                    let _ = el.dispatch_event(&event);
                }
            }
        }
    }
}
