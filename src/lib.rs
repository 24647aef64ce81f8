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
static LAZY_HYDRATION_PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    use std::sync::atomic::Ordering;
    console_error_panic_hook::set_once();
    // what a person enters before the page's view has hydrated is handed to it afterwards
    let entered = entered_before_hydration::Watch::start();
    let path = leptos::prelude::window().location().pathname().unwrap_or_default();
    if app::LAZY_PATHS.contains(&path.trim_end_matches('/')) {
        // a page whose code is a chunk of its own hydrates once that chunk is in (asynchronously)
        LAZY_HYDRATION_PENDING.store(true, Ordering::Relaxed);
        // wasm-bindgen's own task runner: Leptos' is set up inside hydrate_from_async, after this is spawned
        wasm_bindgen_futures::spawn_local(async move {
            let Some(body) = leptos::prelude::document().body() else { return };
            leptos::mount::hydrate_from_async(body, app::App).await.forget();
            entered.replay();
            LAZY_HYDRATION_PENDING.store(false, Ordering::Relaxed);
            mark_hydrated(true);
        });
    } else {
        leptos::mount::hydrate_body(app::App);
        entered.replay();
    }
}

/// Marks `<body>` hydrated (`data-hydrated`, and when: `data-hydrated-at`, ms since the navigation started), for
/// tests and scripts: the page is interactive from here on. The app's own effect runs before a lazily loaded page's
/// view has hydrated, so it marks only when no such page is pending (`done_lazily` is that page's own mark).
#[cfg(feature = "hydrate")]
pub(crate) fn mark_hydrated(done_lazily: bool) {
    if !done_lazily && LAZY_HYDRATION_PENDING.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let window = leptos::prelude::window();
    if let Some(body) = window.document().and_then(|d| d.body()) {
        let _ = body.set_attribute("data-hydrated", "true");
        if let Some(ms) = window.performance().map(|p| p.now()) {
            let _ = body.set_attribute("data-hydrated-at", &format!("{ms:.0}"));
        }
    }
}

/// Hydration sets every field to what the page's state holds, which knew nothing of what a person typed or chose while
/// the page was the server's HTML (the forms work before the bundle), or while a page's chunk was loading. So: note the
/// fields that differ from the HTML when the bundle starts and every field a person changes until the view has
/// hydrated; afterwards put the values back and tell the page as a person's input would.
#[cfg(feature = "hydrate")]
mod entered_before_hydration {
    use std::cell::RefCell;
    use std::rc::Rc;

    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{Element, Event, EventInit, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement};

    type Entered = Rc<RefCell<Vec<(Element, String)>>>;

    pub struct Watch {
        entered: Entered,
        listener: Option<Closure<dyn FnMut(Event)>>,
    }

    impl Watch {
        pub fn start() -> Watch {
            let entered: Entered = Rc::new(RefCell::new(fields().into_iter().filter_map(|el| Some((el.clone(), changed_value(&el)?))).collect()));
            let noted = entered.clone();
            let listener = Closure::<dyn FnMut(Event)>::new(move |ev: Event| {
                // a person's input only: the replay's own events are not
                if !ev.is_trusted() {
                    return;
                }
                let Some(el) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else { return };
                let Some(value) = value_of(&el) else { return };
                let mut noted = noted.borrow_mut();
                noted.retain(|(e, _)| !e.is_same_node(Some(&el)));
                noted.push((el, value));
            });
            if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                for kind in ["input", "change"] {
                    let _ = doc.add_event_listener_with_callback_and_bool(kind, listener.as_ref().unchecked_ref(), true);
                }
            }
            Watch { entered, listener: Some(listener) }
        }

        pub fn replay(mut self) {
            if let (Some(listener), Some(doc)) = (self.listener.take(), web_sys::window().and_then(|w| w.document())) {
                for kind in ["input", "change"] {
                    let _ = doc.remove_event_listener_with_callback_and_bool(kind, listener.as_ref().unchecked_ref(), true);
                }
            }
            let entered = std::mem::take(&mut *self.entered.borrow_mut());
            // in the page's order: a choice that others depend on (project → organizations) comes first
            for el in fields() {
                let Some((_, value)) = entered.iter().find(|(e, _)| e.is_same_node(Some(&el))) else { continue };
                set_value(&el, value);
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

    fn fields() -> Vec<Element> {
        let Some(list) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector_all("input, select, textarea").ok()) else {
            return Vec::new();
        };
        (0..list.length()).filter_map(|i| list.item(i)?.dyn_into::<Element>().ok()).collect()
    }

    /// The value of a field that holds text or a choice (not a box to tick, a file or a button).
    fn value_of(el: &Element) -> Option<String> {
        if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
            let kind = input.type_();
            (!matches!(kind.as_str(), "checkbox" | "radio" | "file" | "hidden" | "submit" | "button" | "reset" | "image")).then(|| input.value())
        } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
            Some(select.value())
        } else {
            el.dyn_ref::<HtmlTextAreaElement>().map(|a| a.value())
        }
    }

    /// The value of a field that differs from the server's HTML.
    fn changed_value(el: &Element) -> Option<String> {
        let value = value_of(el)?;
        let changed = if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
            value != input.default_value()
        } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
            let options = select.options();
            let default = (0..options.length())
                .find(|&i| options.item(i).and_then(|o| o.dyn_into::<HtmlOptionElement>().ok()).is_some_and(|o| o.default_selected()))
                .map_or(0, |i| i as i32);
            select.selected_index() != default
        } else {
            el.dyn_ref::<HtmlTextAreaElement>().is_some_and(|a| Ok(value.clone()) != a.default_value())
        };
        changed.then_some(value)
    }

    fn set_value(el: &Element, value: &str) {
        if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
            input.set_value(value);
        } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
            select.set_value(value);
        } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
            area.set_value(value);
        }
    }
}
