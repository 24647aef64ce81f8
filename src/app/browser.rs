//! The few browser facilities the UI needs (cookie, clock, clipboard, `<html lang>`), in one place.
//! Only compiled into the WASM bundle; on the server these do nothing.

#[cfg(feature = "hydrate")]
mod js {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        pub type HtmlDocument;

        #[wasm_bindgen(thread_local_v2, js_name = document)]
        pub static DOCUMENT: HtmlDocument;

        #[wasm_bindgen(method, getter, js_name = cookie)]
        pub fn cookie(this: &HtmlDocument) -> String;

        #[wasm_bindgen(method, setter, js_name = cookie)]
        pub fn set_cookie(this: &HtmlDocument, value: &str);

        /// `Date.now()`: milliseconds since the epoch (chrono's `Utc::now` panics in WASM).
        #[wasm_bindgen(js_namespace = Date, js_name = now)]
        pub fn date_now() -> f64;
    }
}

#[cfg(feature = "hydrate")]
pub fn document_cookie() -> String {
    js::DOCUMENT.with(|d| d.cookie())
}

#[cfg(feature = "hydrate")]
pub fn set_document_cookie(value: &str) {
    js::DOCUMENT.with(|d| d.set_cookie(value))
}

#[cfg(feature = "hydrate")]
pub fn set_html_lang(code: &str) {
    if let Some(el) = leptos::prelude::document().document_element() {
        let _ = el.set_attribute("lang", code);
    }
}

/// Milliseconds since the epoch by the browser's clock (0 on the server).
pub fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        js::date_now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

/// The browser's current (A.D. year, month) on the Bangkok calendar, for sample renderings only.
#[cfg(feature = "hydrate")]
pub fn bangkok_year_month_now() -> Option<(i32, u32)> {
    let ms = js::date_now() as i64;
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms).map(crate::numbering::bangkok_date)
}

/// Copies `text` to the clipboard; `on_done(true)` when the browser accepted it.
pub fn copy_to_clipboard(text: String, on_done: impl FnOnce(bool) + 'static) {
    #[cfg(feature = "hydrate")]
    {
        leptos::task::spawn_local(async move {
            let promise = leptos::prelude::window().navigator().clipboard().write_text(&text);
            let ok = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
            on_done(ok);
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = text;
        on_done(false);
    }
}
