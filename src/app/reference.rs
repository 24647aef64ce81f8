//! `/reference` — reference-data admin (super admins): list each kind, create and edit items (codes are fixed
//! once created; a project or a contract can be deactivated, a project's member organizations chosen), and import a
//! whole JSON document with a dry run first. The server checks every code and every permission again.

use leptos::prelude::*;
use serde_json::json;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{client_fetch, parse_id, ErrorBox, ErrorSlot, NoAccess, ReportView, RequireUser, TableWrap};
use crate::contract::import::ImportReport;
use crate::contract::{CorrespondenceTypeId, OrganizationId, ProjectId, ReferenceData, Role, UserInfo};

const KINDS: &[&str] = &["projects", "organizations", "correspondence-types", "sub-types", "rfa-types", "disciplines", "contracts"];

fn kind_key(kind: &str) -> &'static str {
    match kind {
        "projects" => "ref.kind.projects",
        "organizations" => "ref.kind.organizations",
        "correspondence-types" => "ref.kind.correspondence-types",
        "sub-types" => "ref.kind.sub-types",
        "rfa-types" => "ref.kind.rfa-types",
        "contracts" => "ref.kind.contracts",
        _ => "ref.kind.disciplines",
    }
}

#[component]
pub fn ReferencePage() -> impl IntoView {
    view! {
        <RequireUser content=move |user: UserInfo| {
            if user.role != Role::SuperAdmin {
                return view! { <NoAccess min_role=Role::SuperAdmin/> }.into_any();
            }
            view! { <ReferenceAdmin/> }.into_any()
        }/>
    }
}

/// One row of the list, whatever its kind.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    id: i64,
    code: String,
    name: String,
    role: String,
    active: bool,
    members: Vec<OrganizationId>,
    correspondence_type_id: CorrespondenceTypeId,
    number: String,
    /// A contract's project.
    project_id: ProjectId,
}

fn rows(data: &ReferenceData, kind: &str) -> Vec<Row> {
    let base = |id: i64, code: &str, name: &str| Row {
        id,
        code: code.into(),
        name: name.into(),
        role: String::new(),
        active: true,
        members: vec![],
        correspondence_type_id: CorrespondenceTypeId::default(),
        number: String::new(),
        project_id: ProjectId::default(),
    };
    match kind {
        "projects" => {
            data.projects.iter().map(|p| Row { active: p.active, members: p.member_org_ids.clone(), ..base(p.id.0, &p.code, &p.name) }).collect()
        }
        "organizations" => data.organizations.iter().map(|o| Row { role: o.role.clone(), ..base(o.id.0, &o.code, &o.name) }).collect(),
        "correspondence-types" => data.correspondence_types.iter().map(|t| base(t.id.0, &t.code, &t.name)).collect(),
        "sub-types" => data
            .sub_types
            .iter()
            .map(|s| Row { correspondence_type_id: s.correspondence_type_id, number: s.sub_type_number.clone(), ..base(s.id.0, &s.code, &s.name) })
            .collect(),
        "rfa-types" => data.rfa_types.iter().map(|t| base(t.id.0, &t.code, &t.name)).collect(),
        "contracts" => data.contracts.iter().map(|c| Row { active: c.active, project_id: c.project_id, ..base(c.id.0, &c.code, &c.name) }).collect(),
        _ => data.disciplines.iter().map(|t| base(t.id.0, &t.code, &t.name)).collect(),
    }
}

/// The item form's state: None in `editing` = a new item.
#[derive(Clone, Copy)]
struct ItemForm {
    editing: RwSignal<Option<i64>>,
    code: RwSignal<String>,
    name: RwSignal<String>,
    role: RwSignal<String>,
    active: RwSignal<bool>,
    members: RwSignal<Vec<OrganizationId>>,
    correspondence_type: RwSignal<Option<CorrespondenceTypeId>>,
    number: RwSignal<String>,
    project: RwSignal<Option<ProjectId>>,
    error: RwSignal<Option<String>>,
    saved: RwSignal<bool>,
}

impl ItemForm {
    fn new() -> Self {
        ItemForm {
            editing: RwSignal::new(None),
            code: RwSignal::new(String::new()),
            name: RwSignal::new(String::new()),
            role: RwSignal::new("CONTRACTOR".to_string()),
            active: RwSignal::new(true),
            members: RwSignal::new(Vec::new()),
            correspondence_type: RwSignal::new(None),
            number: RwSignal::new(String::new()),
            project: RwSignal::new(None),
            error: RwSignal::new(None),
            saved: RwSignal::new(false),
        }
    }

    /// An empty form for a new item.
    fn clear(&self) {
        self.editing.set(None);
        self.code.set(String::new());
        self.name.set(String::new());
        self.role.set("CONTRACTOR".into());
        self.active.set(true);
        self.members.set(vec![]);
        self.correspondence_type.set(None);
        self.number.set(String::new());
        self.project.set(None);
        self.error.set(None);
        self.saved.set(false);
    }

    /// The form filled with `r` to edit it.
    fn edit(&self, r: Row) {
        self.clear();
        self.editing.set(Some(r.id));
        self.code.set(r.code);
        self.name.set(r.name);
        if !r.role.is_empty() {
            self.role.set(r.role);
        }
        self.active.set(r.active);
        self.members.set(r.members);
        self.correspondence_type.set(Some(r.correspondence_type_id).filter(|id| *id != CorrespondenceTypeId::NONE));
        self.number.set(r.number);
        self.project.set(Some(r.project_id).filter(|id| *id != ProjectId::NONE));
    }
}

#[component]
fn ReferenceAdmin() -> impl IntoView {
    let i18n = use_i18n();
    let version = RwSignal::new(0u32);
    let data = client_fetch(move || {
        version.track();
        async move { api::fetch_reference_data().await.map_err(|e| error_text(&e)) }
    });
    let kind = RwSignal::new("projects".to_string());
    let form = ItemForm::new();
    let ItemForm { editing, code, name, role, active, members, correspondence_type, number, project, error, saved } = form;

    let save = Action::new(move |_: &()| {
        let k = kind.get_untracked();
        let id = editing.get_untracked();
        let type_code = data.with_untracked(|d| {
            d.as_ref()
                .and_then(|d| d.as_ref().ok())
                .and_then(|d| d.correspondence_types.iter().find(|t| Some(t.id) == correspondence_type.get_untracked()).map(|t| t.code.clone()))
                .unwrap_or_default()
        });
        let project_code = data.with_untracked(|d| {
            d.as_ref()
                .and_then(|d| d.as_ref().ok())
                .and_then(|d| d.projects.iter().find(|p| Some(p.id) == project.get_untracked()).map(|p| p.code.clone()))
                .unwrap_or_default()
        });
        let member_codes: Vec<String> = data.with_untracked(|d| {
            let ids = members.get_untracked();
            d.as_ref()
                .and_then(|d| d.as_ref().ok())
                .map(|d| d.organizations.iter().filter(|o| ids.contains(&o.id)).map(|o| o.code.clone()).collect())
                .unwrap_or_default()
        });
        let item = match k.as_str() {
            "projects" => {
                json!({ "code": code.get_untracked(), "name": name.get_untracked(), "active": active.get_untracked(), "members": member_codes })
            }
            "organizations" => json!({ "code": code.get_untracked(), "name": name.get_untracked(), "role": role.get_untracked() }),
            "sub-types" => {
                json!({ "correspondenceTypeCode": type_code, "subTypeNumber": number.get_untracked(), "code": code.get_untracked(), "name": name.get_untracked() })
            }
            "contracts" => {
                json!({ "projectCode": project_code, "code": code.get_untracked(), "name": name.get_untracked(), "active": active.get_untracked() })
            }
            _ => json!({ "code": code.get_untracked(), "name": name.get_untracked() }),
        };
        async move {
            match api::save_reference_item(k, id, item).await {
                Ok(id) => {
                    editing.set(Some(id));
                    saved.set(true);
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });

    view! {
        <section class="card">
            <h1>{move || i18n.t("ref.title")}</h1>
            <label class="field">
                <span>{move || i18n.t("ref.kind")}</span>
                <select data-testid="ref-kind" prop:value=move || kind.get()
                    on:change=move |ev| { kind.set(event_target_value(&ev)); form.clear(); }>
                    {KINDS.iter().map(|k| view! { <option value=*k>{move || i18n.t(kind_key(k))}</option> }).collect_view()}
                </select>
            </label>
            {move || match data.get() {
                None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
                Some(Ok(d)) => {
                    let k = kind.get();
                    view! {
                        <ItemTable d=d.clone() k=k.clone() form/>

                        <h2 data-testid="ref-form-title">{move || if editing.get().is_some() { i18n.t("ref.editing") } else { i18n.t("ref.creating") }}</h2>
                        <ItemEditor d k form save/>
                        <ErrorSlot error/>
                    }.into_any()
                }
            }}
        </section>
        <ReferenceImport version/>
    }
}

/// The items of kind `k`, each with an edit button.
#[component]
fn ItemTable(d: ReferenceData, k: String, form: ItemForm) -> impl IntoView {
    let i18n = use_i18n();
    let orgs = d.organizations.clone();
    let types = d.correspondence_types.clone();
    let org_code = move |id: OrganizationId| orgs.iter().find(|o| o.id == id).map(|o| o.code.clone()).unwrap_or_else(|| format!("#{id}"));
    let type_code = move |id: CorrespondenceTypeId| types.iter().find(|t| t.id == id).map(|t| t.code.clone()).unwrap_or_default();
    let projects = d.projects.clone();
    let project_code = move |id: ProjectId| projects.iter().find(|p| p.id == id).map(|p| p.code.clone()).unwrap_or_default();
    let is_project = k == "projects";
    let is_org = k == "organizations";
    let is_sub = k == "sub-types";
    let is_contract = k == "contracts";
    view! {
        <TableWrap><table class="list" data-testid="ref-table" data-kind=k.clone()>
            <thead><tr>
                <th>{move || i18n.t("ref.code")}</th>
                <th>{move || i18n.t("ref.name")}</th>
                <th>
                    {move || if is_project || is_contract { i18n.t("ref.state") } else if is_org { i18n.t("ref.role") } else if is_sub { i18n.t("ref.type") } else { "—" }}
                </th>
                <th>
                    {move || if is_project { i18n.t("ref.members") } else if is_sub { i18n.t("ref.number") } else if is_contract { i18n.t("ref.project") } else { "—" }}
                </th>
                <th><span class="visually-hidden">{move || i18n.t("common.actions")}</span></th>
            </tr></thead>
            <tbody>
                {rows(&d, &k).into_iter().map(|r| {
                    let extra = if is_project {
                        String::new()
                    } else if is_org {
                        r.role.clone()
                    } else if is_sub {
                        type_code(r.correspondence_type_id)
                    } else {
                        String::new()
                    };
                    let extra2 = if is_project {
                        r.members.iter().map(|m| org_code(*m)).collect::<Vec<_>>().join(", ")
                    } else if is_contract {
                        project_code(r.project_id)
                    } else {
                        r.number.clone()
                    };
                    let active = r.active;
                    let row = r.clone();
                    view! {
                        <tr data-testid="ref-row" data-code=r.code.clone() data-id=r.id.to_string() class:revoked=!active>
                            <td><code>{r.code.clone()}</code></td>
                            <td data-testid="ref-row-name">{r.name.clone()}</td>
                            <td data-testid="ref-row-extra">{move || if is_project || is_contract { if active { i18n.t("ref.active").to_string() } else { i18n.t("ref.inactive").to_string() } } else { extra.clone() }}</td>
                            <td data-testid="ref-row-extra2">{extra2}</td>
                            <td>
                                <button type="button" class="small" data-testid="ref-edit"
                                    on:click=move |_| form.edit(row.clone())>
                                    {move || i18n.t("ref.edit")}
                                </button>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table></TableWrap>
    }
}

/// The form that creates or edits an item of kind `k` (codes are fixed once created).
#[component]
fn ItemEditor(d: ReferenceData, k: String, form: ItemForm, save: Action<(), ()>) -> impl IntoView {
    let i18n = use_i18n();
    let ItemForm { editing, code, name, role, active, members, correspondence_type, number, project, error, saved } = form;
    let is_project = k == "projects";
    let is_org = k == "organizations";
    let is_sub = k == "sub-types";
    let is_contract = k == "contracts";
    view! {
        <form class="ref-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            error.set(None);
            saved.set(false);
            save.dispatch(());
        }>
            {is_sub.then(|| view! {
                <label class="field">
                    <span>{move || i18n.t("ref.type")}</span>
                    <select data-testid="ref-type" disabled=move || editing.get().is_some()
                        prop:value=move || correspondence_type.get().map(|id| id.to_string()).unwrap_or_default()
                        on:change=move |ev| correspondence_type.set(parse_id(&event_target_value(&ev)).map(CorrespondenceTypeId))>
                        <option value="">{move || i18n.t("common.choose")}</option>
                        {d.correspondence_types.iter().map(|t| view! { <option value=t.id.to_string() data-code=t.code.clone()>{t.code.clone()}</option> }).collect_view()}
                    </select>
                </label>
                <label class="field">
                    <span>{move || i18n.t("ref.number")}</span>
                    <input type="text" maxlength="5" data-testid="ref-number" disabled=move || editing.get().is_some()
                        prop:value=move || number.get() on:input=move |ev| number.set(event_target_value(&ev))/>
                </label>
            })}
            {is_contract.then(|| view! {
                <label class="field">
                    <span>{move || i18n.t("ref.project")}</span>
                    <select data-testid="ref-project" disabled=move || editing.get().is_some()
                        prop:value=move || project.get().map(|id| id.to_string()).unwrap_or_default()
                        on:change=move |ev| project.set(parse_id(&event_target_value(&ev)).map(ProjectId))>
                        <option value="">{move || i18n.t("common.choose")}</option>
                        {d.projects.iter().map(|p| view! { <option value=p.id.to_string() data-code=p.code.clone()>{p.code.clone()}</option> }).collect_view()}
                    </select>
                </label>
            })}
            <label class="field">
                <span>{move || i18n.t("ref.code")}</span>
                <input type="text" maxlength="20" data-testid="ref-code"
                    disabled=move || editing.get().is_some() && !is_sub
                    title=move || if editing.get().is_some() { i18n.t("ref.code_fixed") } else { "" }
                    prop:value=move || code.get() on:input=move |ev| code.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("ref.name")}</span>
                <input type="text" maxlength="200" data-testid="ref-name"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
            </label>
            {is_org.then(|| view! {
                <label class="field">
                    <span>{move || i18n.t("ref.role")}</span>
                    <select data-testid="ref-role" prop:value=move || role.get() on:change=move |ev| role.set(event_target_value(&ev))>
                        {["OWNER", "CONSULTANT", "CONTRACTOR", "OTHER"].into_iter().map(|r| view! { <option value=r>{r}</option> }).collect_view()}
                    </select>
                </label>
            })}
            {(is_project || is_contract).then(|| view! {
                <label class="check">
                    <input type="checkbox" data-testid="ref-active" prop:checked=move || active.get()
                        on:change=move |ev| active.set(event_target_checked(&ev))/>
                    {move || i18n.t("ref.active")}
                </label>
            })}
            {is_project.then(|| view! {
                <fieldset class="checks">
                    <legend>{move || i18n.t("ref.members")}</legend>
                    {d.organizations.iter().map(|o| {
                        let id = o.id;
                        view! {
                            <label class="check">
                                <input type="checkbox" data-testid="ref-member" data-code=o.code.clone()
                                    prop:checked=move || members.with(|m| m.contains(&id))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        members.update(|m| { m.retain(|x| *x != id); if on { m.push(id) } });
                                    }/>
                                {o.code.clone()}
                            </label>
                        }
                    }).collect_view()}
                </fieldset>
            })}
            <div class="actions">
                <button type="submit" class="primary" data-testid="ref-save" disabled=move || save.pending().get()>
                    {move || i18n.t("ref.save")}
                </button>
                " "
                <button type="button" data-testid="ref-new" on:click=move |_| form.clear()>
                    {move || i18n.t("ref.new")}
                </button>
                {move || saved.get().then(|| view! { <span class="ok" data-testid="ref-saved">{i18n.t("ref.saved")}</span> })}
            </div>
        </form>
    }
}

/// Import a whole JSON document of reference data (dry run first); a real import reloads the list
/// (`version`).
#[component]
fn ReferenceImport(version: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let doc = RwSignal::new(String::new());
    let import_error = RwSignal::new(None::<String>);
    let report = RwSignal::new(None::<ImportReport>);
    let import = Action::new(move |dry_run: &bool| {
        let (dry_run, text) = (*dry_run, doc.get_untracked());
        async move {
            match api::reference_import(text, dry_run).await {
                Ok(r) => {
                    if r.applied {
                        version.update(|v| *v += 1);
                    }
                    report.set(Some(r));
                }
                Err(e) => import_error.set(Some(error_text(&e))),
            }
        }
    });
    let run_import = move |dry_run: bool| {
        import_error.set(None);
        report.set(None);
        import.dispatch(dry_run);
    };
    view! {
        <section class="card">
            <h2>{move || i18n.t("ref.import_title")}</h2>
            <p class="muted">{move || i18n.t("ref.import_help")}</p>
            <textarea rows="10" spellcheck="false" data-testid="ref-import-text" aria-label=move || i18n.t("ref.import_title")
                prop:value=move || doc.get() on:input=move |ev| doc.set(event_target_value(&ev))></textarea>
            <div class="actions">
                <button type="button" data-testid="ref-import-dry"
                    disabled=move || import.pending().get() || doc.with(|t| t.trim().is_empty())
                    on:click=move |_| run_import(true)>
                    {move || i18n.t("import.dry_run")}
                </button>
                " "
                <button type="button" class="primary" data-testid="ref-import-apply"
                    disabled=move || import.pending().get() || doc.with(|t| t.trim().is_empty())
                    on:click=move |_| run_import(false)>
                    {move || i18n.t("import.apply")}
                </button>
            </div>
            <ErrorSlot error=import_error/>
            {move || report.get().map(|r| view! { <ReportView report=r/> })}
        </section>
    }
}
