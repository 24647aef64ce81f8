//! The live screens' client (docs/rules/api.md#notifications-and-live-screens): one `EventSource` on
//! `/api/v1/events` for the page being shown, closed with
//! it; each event handed to the page, and a reconnection (the server restarted, the network came back) reported once
//! so the page fetches afresh (it may have missed events meanwhile). On the server it does nothing.

use crate::contract::live::LiveEvent;

/// How long the page waits before opening a stream the browser gave up on (an error answer, not a lost connection:
/// those the browser retries by itself, after the server's `retry:`).
#[cfg(feature = "hydrate")]
const REOPEN_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Follows the changes for as long as the current component lives: `on_event` for each event, `on_reconnect` when the
/// stream opened again after a break.
pub fn follow(on_event: impl Fn(LiveEvent) + 'static, on_reconnect: impl Fn() + 'static) {
    #[cfg(feature = "hydrate")]
    browser::follow(std::rc::Rc::new(on_event), std::rc::Rc::new(on_reconnect));
    #[cfg(not(feature = "hydrate"))]
    let _ = (on_event, on_reconnect);
}

/// A `reload` bump at most once per `within` however many events arrive meanwhile: a page refetches once for a burst.
pub fn debounced(reload: leptos::prelude::RwSignal<u32>, within: std::time::Duration) -> impl Fn() + Clone + 'static {
    use leptos::prelude::*;
    let scheduled = StoredValue::new(false);
    move || {
        if scheduled.try_get_value() != Some(false) {
            return;
        }
        scheduled.set_value(true);
        set_timeout(
            move || {
                let _ = scheduled.try_set_value(false);
                let _ = reload.try_update(|v| *v += 1);
            },
            within,
        );
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use leptos::prelude::*;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{EventSource, MessageEvent};

    use super::REOPEN_AFTER;
    use crate::contract::live::{LiveEvent, EVENTS_PATH};

    /// A listener on the event source, kept alive as long as the stream.
    type Listener = Closure<dyn Fn(web_sys::Event)>;

    struct Stream {
        source: RefCell<Option<EventSource>>,
        closed: Cell<bool>,
        /// Times the stream opened; the second and later are reconnections.
        opened: Cell<u32>,
        on_event: Rc<dyn Fn(LiveEvent)>,
        on_reconnect: Rc<dyn Fn()>,
        /// The listeners, kept as long as the stream.
        listeners: RefCell<Vec<Listener>>,
    }

    pub fn follow(on_event: Rc<dyn Fn(LiveEvent)>, on_reconnect: Rc<dyn Fn()>) {
        let stream = Rc::new(Stream {
            source: RefCell::new(None),
            closed: Cell::new(false),
            opened: Cell::new(0),
            on_event,
            on_reconnect,
            listeners: RefCell::new(Vec::new()),
        });
        open(&stream);
        let kept = StoredValue::new_local(Some(stream));
        on_cleanup(move || {
            if let Some(Some(stream)) = kept.try_update_value(|s| s.take()) {
                stream.closed.set(true);
                if let Some(source) = stream.source.borrow_mut().take() {
                    source.close();
                }
                stream.listeners.borrow_mut().clear();
                if let Some(body) = document().body() {
                    let _ = body.remove_attribute("data-live");
                }
            }
        });
    }

    /// The stream's state on `<body data-live>` (`open`, `connecting`): what a browser test waits for after a restart.
    fn mark(state: &str) {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-live", state);
        }
    }

    fn open(stream: &Rc<Stream>) {
        if stream.closed.get() {
            return;
        }
        let Ok(source) = EventSource::new(EVENTS_PATH) else { return };
        let mut listeners = Vec::new();
        let on_message = {
            let on_event = stream.on_event.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
                let Some(text) = e.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()) else { return };
                if let Ok(event) = serde_json::from_str::<LiveEvent>(&text) {
                    on_event(event);
                }
            })
        };
        for kind in ["counter", "reset", "template"] {
            let _ = source.add_event_listener_with_callback(kind, on_message.as_ref().unchecked_ref());
        }
        listeners.push(on_message);
        let on_open = {
            let weak = Rc::downgrade(stream);
            Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
                let Some(stream) = weak.upgrade() else { return };
                mark("open");
                let times = stream.opened.get() + 1;
                stream.opened.set(times);
                if times > 1 {
                    (stream.on_reconnect)();
                }
            })
        };
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        listeners.push(on_open);
        let on_error = {
            let weak = Rc::downgrade(stream);
            Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
                let Some(stream) = weak.upgrade() else { return };
                mark("connecting");
                // CONNECTING: the browser retries by itself; CLOSED: it gave up (an error answer), so open anew later
                let gave_up = stream.source.borrow().as_ref().is_some_and(|s| s.ready_state() == EventSource::CLOSED);
                if gave_up {
                    let weak = Rc::downgrade(&stream);
                    set_timeout(
                        move || {
                            if let Some(stream) = weak.upgrade() {
                                open(&stream);
                            }
                        },
                        REOPEN_AFTER,
                    );
                }
            })
        };
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        listeners.push(on_error);
        if let Some(old) = stream.source.borrow_mut().replace(source) {
            old.close();
        }
        *stream.listeners.borrow_mut() = listeners;
    }
}
