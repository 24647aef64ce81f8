//! The reserve page in the browser: one set of listeners on the document (the page's part is replaced whole, so none
//! is tied to an element), and a little state.

use std::cell::{Cell, RefCell};

use crate::markers::ROOT;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    AbortController, Document, DomParser, Element, Event, EventSource, FormData, Headers, HtmlElement, HtmlFormElement, HtmlInputElement,
    HtmlTemplateElement, MessageEvent, RequestInit, RequestRedirect, Response, SubmitEvent, SupportedType, UrlSearchParams, Window,
};

/// How long typing may pause before the page is asked for again, and how long live events are gathered first.
const SETTLE_MS: i32 = 300;
/// How soon a live stream the browser gave up on is opened again.
const REOPEN_MS: i32 = 5_000;

/// Why the page is asked for again: a person's choice, or a live event (which may mark the preview stale).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    Choice,
    Live,
}

#[derive(Default)]
struct State {
    /// Bumped by every choice, post and refresh: an answer to an older one is dropped.
    generation: Cell<u64>,
    /// A form post is under way (taps on other buttons wait for it).
    posting: Cell<bool>,
    /// The last post, for the retry button: its address and its fields.
    last_post: RefCell<Option<(String, String)>>,
    /// The pending timer of typing or live events.
    timer: Cell<Option<i32>>,
    /// The cause of the pending timer's refresh (a choice wins over a live event).
    timer_cause: Cell<Option<Cause>>,
    /// How often the live stream has opened (every opening after the first may have missed events).
    opened: Cell<u32>,
    live: RefCell<Option<EventSource>>,
    /// A finger (or the mouse button) is down on the page: a new drawing waits for it to lift.
    pressed: Cell<bool>,
    /// The request under way, stopped when another supersedes it: on a weak signal its bytes would slow the next.
    in_flight: RefCell<Option<AbortController>>,
}

thread_local! {
    static STATE: State = State::default();
}

fn window() -> Window {
    web_sys::window().expect("a page has a window")
}

fn document() -> Document {
    window().document().expect("a page has a document")
}

fn root() -> Option<Element> {
    document().get_element_by_id(ROOT)
}

fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or(0.0)
}

fn next_generation() -> u64 {
    STATE.with(|s| {
        if let Some(previous) = s.in_flight.borrow_mut().take() {
            previous.abort();
        }
        let g = s.generation.get() + 1;
        s.generation.set(g);
        g
    })
}

fn is_current(generation: u64) -> bool {
    STATE.with(|s| s.generation.get() == generation)
}

fn listen(target: &web_sys::EventTarget, kind: &str, f: impl FnMut(Event) + 'static) {
    let closure = Closure::<dyn FnMut(Event)>::new(f);
    let _ = target.add_event_listener_with_callback(kind, closure.as_ref().unchecked_ref());
    // the listeners live as long as the page
    closure.forget();
}

fn after(ms: i32, f: impl FnOnce() + 'static) -> Option<i32> {
    let closure = Closure::once_into_js(f);
    window().set_timeout_with_callback_and_timeout_and_arguments_0(closure.unchecked_ref(), ms).ok()
}

pub fn start() {
    let doc = document();
    listen(&doc, "change", on_change);
    listen(&doc, "input", on_input);
    listen(&doc, "submit", on_submit);
    listen(&doc, "click", on_click);
    listen(&doc, "pointerdown", |_| STATE.with(|s| s.pressed.set(true)));
    for lifted in ["pointerup", "pointercancel"] {
        listen(&doc, lifted, |_| STATE.with(|s| s.pressed.set(false)));
    }
    let tick = Closure::<dyn FnMut()>::new(tick_countdown);
    let _ = window().set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), 500);
    tick.forget();
    enhance();
    follow_live_events();
    // a choice made while the script was on its way stays as it is (the form posts it); the page is drawn again on
    // the next change. Not at once: a tap may already have posted the form natively, and a drawing of this page as
    // that post's answer arrives would take the answer's place
    mark_ready();
}

/// `<body data-hydrated>`, as the hydrated pages have it: the page is interactive from here on (tests wait for it).
fn mark_ready() {
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
        let _ = body.set_attribute("data-hydrated-at", &format!("{:.0}", now_ms()));
    }
}

/// What the script does to the page's part each time it arrives.
fn enhance() {
    let Some(root) = root() else { return };
    for el in all(&root, "[data-without-script]") {
        let _ = el.set_attribute("hidden", "");
    }
    for template in all(&root, "template[data-with-script]") {
        if let Some(content) = template_content(&template) {
            let _ = template.replace_with_with_node_1(&content);
        }
    }
    tick_countdown();
}

fn all(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.item(i)?.dyn_into::<Element>().ok()).collect()
}

fn template_content(template: &Element) -> Option<web_sys::Node> {
    let template = template.dyn_ref::<HtmlTemplateElement>()?;
    template.content().clone_node_with_deep(true).ok()
}

fn set_disabled(el: &Element, disabled: bool) {
    if disabled {
        let _ = el.set_attribute("disabled", "");
    } else {
        let _ = el.remove_attribute("disabled");
    }
}

fn reserve_form() -> Option<HtmlFormElement> {
    document().query_selector("form[data-testid=reserve-form]").ok().flatten()?.dyn_into().ok()
}

/// The reserve form's fields as the page's query (the choices in the address).
fn form_query(form: &HtmlFormElement) -> Option<String> {
    let data = FormData::new_with_form(form).ok()?;
    let params = UrlSearchParams::new_with_str_sequence_sequence(&data).ok()?;
    // an empty field is no choice: left out, as the server leaves it
    let names = js_sys::try_iter(&params.keys()).ok().flatten().map(|keys| keys.filter_map(|k| k.ok()?.as_string()).collect::<Vec<_>>());
    for name in names.unwrap_or_default() {
        if params.get(&name).is_some_and(|v| v.trim().is_empty()) {
            params.delete(&name);
        }
    }
    Some(String::from(params.to_string()))
}

fn in_reserve_form(target: &Element) -> bool {
    target.closest("form[data-testid=reserve-form]").ok().flatten().is_some()
}

fn on_change(ev: Event) {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else { return };
    if target.tag_name().eq_ignore_ascii_case("select") && in_reserve_form(&target) {
        refresh(Cause::Choice);
    }
}

fn on_input(ev: Event) {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else { return };
    if target.tag_name().eq_ignore_ascii_case("input") && in_reserve_form(&target) {
        // a revision is typed in capitals; the page is asked for once the typing pauses
        if let Some(input) = target.dyn_ref::<HtmlInputElement>() {
            let value = input.value();
            let upper = value.to_uppercase();
            if upper != value {
                let at = input.selection_start().ok().flatten();
                input.set_value(&upper);
                if let Some(at) = at {
                    let _ = input.set_selection_range(at, at);
                }
            }
        }
        next_generation();
        schedule(Cause::Choice);
    }
}

/// Asks for the page once things settle (typing, a burst of live events).
fn schedule(cause: Cause) {
    STATE.with(|s| {
        if let Some(t) = s.timer.take() {
            window().clear_timeout_with_handle(t);
        }
        let cause = if s.timer_cause.get() == Some(Cause::Choice) { Cause::Choice } else { cause };
        s.timer_cause.set(Some(cause));
        s.timer.set(after(SETTLE_MS, move || {
            STATE.with(|s| {
                s.timer.set(None);
                s.timer_cause.set(None);
            });
            refresh(cause);
        }));
    });
}

fn on_submit(ev: Event) {
    let Some(form) = ev.target().and_then(|t| t.dyn_into::<HtmlFormElement>().ok()) else { return };
    if !root().is_some_and(|r| r.contains(Some(&form))) {
        return;
    }
    ev.prevent_default();
    // the "show the parts" step (also what Enter in the form presses first): the page for these choices
    let submitter = ev.dyn_ref::<SubmitEvent>().and_then(|e| e.submitter());
    if submitter.is_some_and(|b| b.get_attribute("formmethod").as_deref() == Some("get")) {
        refresh(Cause::Choice);
        return;
    }
    let Ok(data) = FormData::new_with_form(&form) else { return };
    let Ok(params) = UrlSearchParams::new_with_str_sequence_sequence(&data) else { return };
    post(form.action(), String::from(params.to_string()), Some(form));
}

fn on_click(ev: Event) {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else { return };
    let Ok(Some(el)) =
        target.closest("[data-testid=copy-button], [data-testid=retry-button], [data-testid=menu-toggle], [data-testid=new-reservation]")
    else {
        return;
    };
    match el.get_attribute("data-testid").as_deref() {
        Some("copy-button") => copy(&el),
        Some("retry-button") => {
            let last = STATE.with(|s| s.last_post.borrow().clone());
            if let Some((action, body)) = last {
                post(action, body, None);
            }
        }
        Some("menu-toggle") => toggle_menu(&el),
        Some("new-reservation") => {
            // the next reservation, same choices: the card goes, the form stays
            ev.prevent_default();
            if let Some(href) = el.get_attribute("href") {
                load(href, Cause::Choice, Card::Drop);
            }
        }
        _ => {}
    }
}

/// The phone's menu (under 640 px the header's links fold into it).
fn toggle_menu(button: &Element) {
    let Some(menu) = document().get_element_by_id("main-menu") else { return };
    let open = menu.class_list().toggle("open").unwrap_or(false);
    let _ = button.set_attribute("aria-expanded", if open { "true" } else { "false" });
}

fn copy(button: &Element) {
    let text = button.get_attribute("data-copy-text").unwrap_or_default();
    let button = button.clone();
    spawn_local(async move {
        let copied = JsFuture::from(window().navigator().clipboard().write_text(&text)).await.is_ok();
        let Some(card) = button.closest("[data-testid=reservation]").ok().flatten() else { return };
        for old in all(&card, "[data-testid=copy-result]") {
            old.remove();
        }
        let which = if copied { "template[data-copied]" } else { "template[data-copy-failed]" };
        if let Some(result) = card.query_selector(which).ok().flatten().and_then(|t| template_content(&t)) {
            let _ = button.after_with_node_1(&result);
        }
    });
}

/// Asks for the page with the form's choices and puts its part in place.
fn refresh(cause: Cause) {
    let Some(form) = reserve_form() else { return };
    let Some(query) = form_query(&form) else { return };
    let address = if query.is_empty() { "/".to_string() } else { format!("/?{query}") };
    load(address, cause, Card::Keep);
}

/// Whether a reservation's card on the page stays when the page's part is drawn again: the server shows a card once
/// (after the post that made or changed it), so a choice or a live event keeps the one shown; the next reservation
/// drops it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Card {
    Keep,
    Drop,
}

fn load(address: String, cause: Cause, card: Card) {
    // a post under way draws the page when its answer comes
    if STATE.with(|s| s.posting.get()) {
        return;
    }
    let generation = next_generation();
    let preview_before = preview_text();
    spawn_local(async move {
        let Ok(response) = fetch(&address, None).await else { return };
        if !is_current(generation) || !response.ok() {
            return;
        }
        let Some(html) = text(&response).await else { return };
        // never under a finger: a tap pressed on one drawing of the page and lifted on the next is no click, and lost
        if STATE.with(|s| s.pressed.get()) {
            while STATE.with(|s| s.pressed.get()) {
                sleep(30).await;
            }
            // the click of that tap first (a post it makes supersedes this drawing)
            sleep(0).await;
        }
        if !is_current(generation) || !swap(&html, card) {
            return;
        }
        replace_address(&response.url());
        if cause == Cause::Live && preview_before.is_some() && preview_text() != preview_before {
            show_stale();
        }
    });
}

/// Posts a form in the background; its answer (the page, after the server's `303`) replaces the page's part.
fn post(action: String, body: String, form: Option<HtmlFormElement>) {
    // one post at a time: a second tap waits for the first's answer
    if STATE.with(|s| s.posting.get()) {
        return;
    }
    STATE.with(|s| {
        s.posting.set(true);
        *s.last_post.borrow_mut() = Some((action.clone(), body.clone()));
    });
    let generation = next_generation();
    let buttons = root().map(|r| all(&r, "button")).unwrap_or_default();
    for b in &buttons {
        set_disabled(b, true);
    }
    let busy = form.and_then(|f| f.query_selector("[data-busy-label]").ok().flatten());
    let label = busy.as_ref().and_then(|b| {
        let before = b.text_content();
        b.set_text_content(b.get_attribute("data-busy-label").as_deref());
        before
    });
    spawn_local(async move {
        let answer = match fetch(&action, Some(&body)).await {
            Ok(response) if response.ok() => text(&response).await.filter(|html| swap(html, Card::Drop)).map(|_| response.url()),
            _ => None,
        };
        STATE.with(|s| s.posting.set(false));
        match answer {
            Some(address) => {
                replace_address(&address);
                STATE.with(|s| *s.last_post.borrow_mut() = None);
            }
            None => {
                // the page stays as it was: the buttons come back, and the words for a post that did not get through
                for b in &buttons {
                    set_disabled(b, false);
                }
                if let (Some(b), Some(label)) = (&busy, label) {
                    b.set_text_content(Some(&label));
                }
                if is_current(generation) {
                    show_unreachable();
                }
            }
        }
    });
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = JsFuture::from(promise).await;
}

async fn fetch(address: &str, form_body: Option<&str>) -> Result<Response, JsValue> {
    let init = RequestInit::new();
    let headers = Headers::new()?;
    headers.set("Accept", "text/html")?;
    if let Some(body) = form_body {
        init.set_method("POST");
        headers.set("Content-Type", "application/x-www-form-urlencoded")?;
        init.set_body(&JsValue::from_str(body));
    }
    init.set_headers(&headers);
    init.set_redirect(RequestRedirect::Follow);
    // a drawing may be stopped; a post never is (its number may be taken already, its answer is awaited)
    if form_body.is_none() {
        if let Ok(controller) = AbortController::new() {
            init.set_signal(Some(&controller.signal()));
            STATE.with(|s| *s.in_flight.borrow_mut() = Some(controller));
        }
    }
    JsFuture::from(window().fetch_with_str_and_init(address, &init)).await?.dyn_into()
}

async fn text(response: &Response) -> Option<String> {
    JsFuture::from(response.text().ok()?).await.ok()?.as_string()
}

/// Puts the page's part from `html` in place of the one shown; the field being typed in keeps its focus and caret.
fn swap(html: &str, card: Card) -> bool {
    let Some(current) = root() else { return false };
    let Ok(parser) = DomParser::new() else { return false };
    let Ok(doc) = parser.parse_from_string(html, SupportedType::TextHtml) else { return false };
    let Some(fresh) = doc.get_element_by_id(ROOT) else { return false };
    let focused = document().active_element().filter(|el| current.contains(Some(el)));
    // the focused control is found again by what names it: a field by its name, a button by its test id (a kept
    // card's button is the same node, but putting the node back does not give it the focus back)
    let focus = focused.as_ref().and_then(|el| {
        let selector = ["name", "data-testid", "id"].into_iter().find_map(|attr| Some(format!("[{attr}=\"{}\"]", el.get_attribute(attr)?)))?;
        let caret = el.dyn_ref::<HtmlInputElement>().and_then(|i| i.selection_start().ok().flatten());
        Some((selector, caret))
    });
    let kept = match card {
        Card::Keep if fresh.query_selector("[data-testid=reservation]").ok().flatten().is_none() => {
            current.query_selector("[data-testid=reservation]").ok().flatten()
        }
        _ => None,
    };
    current.set_inner_html(&fresh.inner_html());
    // the part's own markers (the project and type it shows) come with it
    for name in ["data-project", "data-type", "data-events"] {
        match fresh.get_attribute(name) {
            Some(value) => current.set_attribute(name, &value).unwrap_or_default(),
            None => current.remove_attribute(name).unwrap_or_default(),
        }
    }
    if let Some(card) = kept {
        let _ = current.append_with_node_1(&card);
    }
    enhance();
    if let Some((selector, caret)) = focus {
        if let Some(el) = current.query_selector(&selector).ok().flatten() {
            if let Some(el) = el.dyn_ref::<HtmlElement>() {
                let _ = el.focus();
            }
            if let (Some(input), Some(at)) = (el.dyn_ref::<HtmlInputElement>(), caret) {
                let _ = input.set_selection_range(at, at);
            }
        }
    }
    true
}

/// The page's address becomes `address` (a reload shows the same choices); the language switch comes back to it.
fn replace_address(address: &str) {
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(address));
    }
    let location = window().location();
    let here = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
    if let Some(back) = document().query_selector("form.lang-form input[name=back]").ok().flatten() {
        let _ = back.set_attribute("value", &here);
    }
}

fn preview_text() -> Option<String> {
    document().query_selector("[data-testid=preview-number]").ok().flatten().and_then(|el| el.text_content())
}

fn show_stale() {
    let Some(box_) = document().query_selector(".preview-box").ok().flatten() else { return };
    if box_.query_selector("[data-testid=preview-stale]").ok().flatten().is_some() {
        return;
    }
    if let Some(notice) = box_.query_selector("template[data-stale]").ok().flatten().and_then(|t| template_content(&t)) {
        let _ = box_.prepend_with_node_1(&notice);
    }
}

fn show_unreachable() {
    let Some(root) = root() else { return };
    for old in all(&root, "[data-shown-by-script]") {
        old.remove();
    }
    let Some(slot) = root.query_selector("template[data-unreachable]").ok().flatten() else { return };
    for which in ["template[data-retry]", "template[data-unreachable]"] {
        let Some(content) = root.query_selector(which).ok().flatten().and_then(|t| template_content(&t)) else { continue };
        // mark what is shown, so that the next failure replaces it rather than adding to it
        if let Some(el) = content.dyn_ref::<web_sys::DocumentFragment>().and_then(|f| f.first_element_child()) {
            let _ = el.set_attribute("data-shown-by-script", "");
        }
        let _ = slot.after_with_node_1(&content);
    }
}

/// The countdown of the reservation on the page: from its seconds when the card arrived, by the browser's clock (the
/// card notes when that will be over, `data-ends-at`, and keeps it when the page's part is drawn again around it).
fn tick_countdown() {
    let Some(counter) = document().query_selector("[data-ttl-seconds]").ok().flatten() else { return };
    let ends_at = match counter.get_attribute("data-ends-at").and_then(|s| s.parse::<f64>().ok()) {
        Some(at) => at,
        None => {
            let ttl: f64 = counter.get_attribute("data-ttl-seconds").and_then(|s| s.parse().ok()).unwrap_or(0.0);
            let at = now_ms() + ttl * 1000.0;
            let _ = counter.set_attribute("data-ends-at", &format!("{at:.0}"));
            at
        }
    };
    let left = ((ends_at - now_ms()) / 1000.0).ceil().max(0.0) as i64;
    counter.set_text_content(Some(&format!("{:02}:{:02}", left / 60, left % 60)));
    if left == 0 {
        if let Some(label) = document().query_selector("[data-expired-label]").ok().flatten() {
            let words = label.get_attribute("data-expired-label");
            label.set_text_content(words.as_deref());
        }
    }
}

/// The live events of the service (`/api/v1/events`): a number taken elsewhere from the counter of the page's
/// choices, or a change of its template, asks for the page again; so does a reconnection, which may have missed some.
fn follow_live_events() {
    let Some(address) = root().and_then(|r| r.get_attribute("data-events")) else { return };
    let Ok(source) = EventSource::new(&address) else { return };
    for kind in ["counter", "reset", "template"] {
        listen(&source, kind, |ev| {
            let Some(data) = ev.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()) else { return };
            if concerns_the_page(&data) && !STATE.with(|s| s.posting.get()) {
                schedule(Cause::Live);
            }
        });
    }
    listen(&source, "open", |_| {
        mark_live("open");
        let opened = STATE.with(|s| {
            s.opened.set(s.opened.get() + 1);
            s.opened.get()
        });
        if opened > 1 {
            schedule(Cause::Live);
        }
    });
    listen(&source, "error", |_| {
        mark_live("connecting");
        // CONNECTING: the browser tries again by itself; CLOSED: it gave up (an error answer), so open anew later
        let gave_up = STATE.with(|s| s.live.borrow().as_ref().is_some_and(|l| l.ready_state() == EventSource::CLOSED));
        if gave_up {
            after(REOPEN_MS, follow_live_events);
        }
    });
    if let Some(old) = STATE.with(|s| s.live.borrow_mut().replace(source)) {
        old.close();
    }
}

/// `<body data-live>`: the stream's state (`open`, `connecting`), what a browser test waits for after a restart.
fn mark_live(state: &str) {
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-live", state);
    }
}

/// Whether an event is about the project and type the page shows (the server then tells what changed).
fn concerns_the_page(data: &str) -> bool {
    let Ok(event) = js_sys::JSON::parse(data) else { return false };
    let number = |name: &str| js_sys::Reflect::get(&event, &JsValue::from_str(name)).ok().and_then(|v| v.as_f64());
    let shown = |name: &str| root()?.get_attribute(name)?.parse::<f64>().ok();
    let (Some(project), Some(ctype)) = (shown("data-project"), shown("data-type")) else { return false };
    number("projectId") == Some(project) && number("correspondenceTypeId").is_none_or(|t| t == ctype)
}
