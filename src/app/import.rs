//! `/import` — bulk import of counters and legacy numbers (super admins): paste or choose a file, pick the
//! format, "ตรวจสอบ (dry run)" shows the per-row report, "นำเข้า" applies all rows or none.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{AdminPage, ErrorSlot, ReportView};
use crate::contract::import::{ImportFormat, ImportReport};
use crate::contract::Role;

#[component]
pub fn ImportPage() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <AdminPage title="import.title" min_role=Role::SuperAdmin reference=false content=move |_| view! {
            <p class="muted">{move || i18n.t("import.help")}</p>
            <BulkImport/>
        }/>
    }
}

#[component]
fn BulkImport() -> impl IntoView {
    let i18n = use_i18n();
    let format = RwSignal::new(ImportFormat::Json);
    let text = RwSignal::new(String::new());
    let reason = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let report = RwSignal::new(None::<ImportReport>);

    let run = Action::new(move |dry_run: &bool| {
        let dry_run = *dry_run;
        let (t, f) = (text.get_untracked(), format.get_untracked());
        let r = Some(reason.get_untracked()).filter(|r| !r.trim().is_empty());
        async move {
            match api::bulk_import(t, f, r, dry_run).await {
                Ok(rep) => report.set(Some(rep)),
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });
    let start = move |dry_run: bool| {
        error.set(None);
        report.set(None);
        run.dispatch(dry_run);
    };

    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        if let Some(f) = file::chosen(&ev) {
            if f.name().to_ascii_lowercase().ends_with(".csv") {
                format.set(ImportFormat::Csv);
            } else if f.name().to_ascii_lowercase().ends_with(".json") {
                format.set(ImportFormat::Json);
            }
            file::read_into(f, text, error);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };

    view! {
        <div class="import-form">
            <label class="field">
                <span>{move || i18n.t("import.format")}</span>
                <select data-testid="import-format"
                    prop:value=move || if format.get() == ImportFormat::Csv { "csv" } else { "json" }
                    on:change=move |ev| format.set(if event_target_value(&ev) == "csv" { ImportFormat::Csv } else { ImportFormat::Json })>
                    <option value="json">"JSON"</option>
                    <option value="csv">"CSV"</option>
                </select>
            </label>
            <label class="field">
                <span>{move || i18n.t("import.file")}</span>
                <input type="file" accept=".json,.csv,application/json,text/csv" data-testid="import-file" on:change=on_file/>
            </label>
            <label class="field">
                <span>{move || i18n.t("import.text")}</span>
                <textarea rows="12" spellcheck="false" data-testid="import-text"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            </label>
            <label class="field">
                <span>{move || i18n.t("import.reason")}</span>
                <input type="text" maxlength="500" data-testid="import-reason"
                    prop:value=move || reason.get()
                    on:input=move |ev| reason.set(event_target_value(&ev))/>
            </label>
            <div class="actions">
                <button type="button" data-testid="import-dry"
                    disabled=move || run.pending().get() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| start(true)>
                    {move || i18n.t("import.dry_run")}
                </button>
                " "
                <button type="button" class="primary" data-testid="import-apply"
                    disabled=move || run.pending().get() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| start(false)>
                    {move || i18n.t("import.apply")}
                </button>
            </div>
        </div>
        <ErrorSlot error/>
        {move || report.get().map(|r| view! { <ReportView report=r/> })}
    }
}

/// Reading a chosen file in the browser (`File.text()`), without extra web-sys features.
#[cfg(feature = "hydrate")]
pub(super) mod file {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::js_sys::Promise;

    #[wasm_bindgen]
    extern "C" {
        pub type FileInput;
        #[wasm_bindgen(method, getter)]
        pub fn files(this: &FileInput) -> Option<FileList>;

        pub type FileList;
        #[wasm_bindgen(method)]
        pub fn item(this: &FileList, index: u32) -> Option<File>;

        pub type File;
        #[wasm_bindgen(method, getter)]
        pub fn name(this: &File) -> String;
        #[wasm_bindgen(method)]
        pub fn text(this: &File) -> Promise;
    }

    /// The file chosen in the `<input type=file>` the event came from.
    pub fn chosen(ev: &leptos::ev::Event) -> Option<File> {
        ev.target()?.unchecked_into::<FileInput>().files()?.item(0)
    }

    /// Reads the file's text into `text`, or says in `error` that it could not.
    pub fn read_into(f: File, text: leptos::prelude::RwSignal<String>, error: leptos::prelude::RwSignal<Option<String>>) {
        use leptos::prelude::Set;
        leptos::task::spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(f.text()).await {
                Ok(v) => text.set(v.as_string().unwrap_or_default()),
                Err(_) => error.set(Some("อ่านไฟล์ไม่ได้ / could not read the file".into())),
            }
        });
    }
}
