//! `/users` — user administration (super admins): create a user; per user, the role and the projects they
//! administer, deactivate / reactivate, set a password. The server checks every change and audits it.

use leptos::prelude::*;

use super::api::{self, error_text};
use super::i18n::use_i18n;
use super::widgets::{bangkok_time, client_fetch, AdminContext, AdminPage, ErrorBox, ErrorSlot, TableHead, TableWrap};
use crate::contract::*;

const ROLES: [Role; 3] = [Role::Staff, Role::ProjectAdmin, Role::SuperAdmin];

#[component]
pub fn UsersPage() -> impl IntoView {
    view! {
        <AdminPage title="users.title" min_role=Role::SuperAdmin wide=true content=|ctx: AdminContext| view! {
            <Users projects=ctx.data.projects me=ctx.user.id/>
        }/>
    }
}

#[component]
fn Users(projects: Vec<ProjectItem>, me: UserId) -> impl IntoView {
    let i18n = use_i18n();
    let projects = StoredValue::new(projects);
    let version = RwSignal::new(0u32);
    let list = client_fetch(move || {
        version.track();
        async move { api::list_users().await.map_err(|e| error_text(&e)) }
    });
    let error = RwSignal::new(None::<String>);
    let notice = RwSignal::new(None::<String>);

    view! {
        <CreateUserForm projects error notice version/>
        <ErrorSlot error/>
        {move || notice.get().map(|n| view! { <p class="ok" data-testid="users-notice">{n}</p> })}
        <h2>{move || i18n.t("users.list")}</h2>
        {move || match list.get() {
            None => view! { <p class="muted">{i18n.t("common.loading")}</p> }.into_any(),
            Some(Err(m)) => view! { <ErrorBox message=m/> }.into_any(),
            Some(Ok(users)) => view! {
                <TableWrap><table class="list" data-testid="users-table">
                    <TableHead columns=vec!["users.username", "users.role", "users.projects", "users.state", "users.password"]/>
                    <tbody>
                        {users.into_iter().map(|u| view! { <UserRow user=u projects me error notice version/> }).collect_view()}
                    </tbody>
                </table></TableWrap>
            }.into_any(),
        }}
    }
}

/// Checkboxes of the projects, one per project, writing the chosen ids to `chosen`.
#[component]
fn ProjectChecks(projects: StoredValue<Vec<ProjectItem>>, chosen: RwSignal<Vec<ProjectId>>, testid: &'static str) -> impl IntoView {
    projects.with_value(|ps| {
        ps.iter()
            .map(|p| {
                let id = p.id;
                let code = p.code.clone();
                view! {
                    <label class="check">
                        <input type="checkbox" data-testid=testid data-code=code.clone()
                            prop:checked=move || chosen.with(|c| c.contains(&id))
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                chosen.update(|c| {
                                    c.retain(|x| *x != id);
                                    if on { c.push(id) }
                                });
                            }/>
                        {code}
                    </label>
                }
            })
            .collect_view()
    })
}

/// A select of the three roles.
#[component]
fn RoleSelect(role: RwSignal<Role>, testid: &'static str, #[prop(optional, into)] label: Option<Signal<String>>) -> impl IntoView {
    view! {
        <select data-testid=testid aria-label=move || label.map(|l| l.get()) on:change=move |ev| {
            if let Some(r) = Role::parse(&event_target_value(&ev)) { role.set(r) }
        }>
            {ROLES.into_iter().map(|r| view! {
                <option value=r.as_str() prop:selected=move || role.get() == r>{r.as_str()}</option>
            }).collect_view()}
        </select>
    }
}

#[component]
fn CreateUserForm(
    projects: StoredValue<Vec<ProjectItem>>,
    error: RwSignal<Option<String>>,
    notice: RwSignal<Option<String>>,
    version: RwSignal<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let username = RwSignal::new(String::new());
    let display = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Staff);
    let chosen = RwSignal::new(Vec::<ProjectId>::new());
    let create = Action::new(move |new: &NewUser| {
        let new = new.clone();
        async move {
            match api::create_user(new).await {
                Ok(u) => {
                    notice.set(Some(format!("{}: {}", i18n.t("users.created"), u.username)));
                    username.set(String::new());
                    display.set(String::new());
                    password.set(String::new());
                    chosen.set(Vec::new());
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
            version.update(|v| *v += 1);
        }
    });
    view! {
        <form class="user-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            error.set(None);
            notice.set(None);
            let display = display.get_untracked();
            create.dispatch(NewUser {
                username: username.get_untracked().trim().to_string(),
                display_name: (!display.trim().is_empty()).then_some(display),
                password: password.get_untracked(),
                role: role.get_untracked(),
                admin_project_ids: if role.get_untracked() == Role::ProjectAdmin { chosen.get_untracked() } else { Vec::new() },
            });
        }>
            <h2>{move || i18n.t("users.new")}</h2>
            <label class="field">
                <span>{move || i18n.t("users.username")}</span>
                <input type="text" required maxlength="50" autocomplete="off" data-testid="new-user-username"
                    prop:value=move || username.get() on:input=move |ev| username.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("users.display_name")}</span>
                <input type="text" maxlength="200" data-testid="new-user-display"
                    prop:value=move || display.get() on:input=move |ev| display.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("users.password")}</span>
                <input type="password" required autocomplete="new-password" data-testid="new-user-password"
                    prop:value=move || password.get() on:input=move |ev| password.set(event_target_value(&ev))/>
            </label>
            <label class="field">
                <span>{move || i18n.t("users.role")}</span>
                <RoleSelect role testid="new-user-role"/>
            </label>
            <Show when=move || role.get() == Role::ProjectAdmin>
                <fieldset class="checks">
                    <legend>{move || i18n.t("users.projects")}</legend>
                    <ProjectChecks projects chosen testid="new-user-project"/>
                </fieldset>
            </Show>
            <button type="submit" class="primary" data-testid="new-user-create"
                disabled=move || create.pending().get() || username.with(|u| u.trim().is_empty()) || password.with(String::is_empty)>
                {move || i18n.t("users.create")}
            </button>
        </form>
    }
}

/// One user: role and projects (editable, saved together), state with its button, a password to set.
#[component]
fn UserRow(
    user: UserAdminInfo,
    projects: StoredValue<Vec<ProjectItem>>,
    me: UserId,
    error: RwSignal<Option<String>>,
    notice: RwSignal<Option<String>>,
    version: RwSignal<u32>,
) -> impl IntoView {
    let i18n = use_i18n();
    let id = user.id;
    let username = StoredValue::new(user.username.clone());
    let role = RwSignal::new(user.role);
    let chosen = RwSignal::new(user.admin_project_ids.clone());
    let new_password = RwSignal::new(String::new());
    let active = user.active;
    let done = move |key: &'static str| {
        notice.set(Some(format!("{}: {}", i18n.t(key), username.get_value())));
        version.update(|v| *v += 1);
    };

    let save = Action::new(move |change: &UserUpdate| {
        let change = change.clone();
        async move {
            match api::update_user(id, change).await {
                Ok(_) => done("users.saved"),
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });
    let toggle = Action::new(move |on: &bool| {
        let on = *on;
        async move {
            match api::set_user_active(id, on).await {
                Ok(_) => done(if on { "users.reactivated" } else { "users.deactivated" }),
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });
    let set_password = Action::new(move |pw: &String| {
        let pw = pw.clone();
        async move {
            match api::set_user_password(id, pw).await {
                Ok(()) => {
                    new_password.set(String::new());
                    done("users.password_set");
                }
                Err(e) => error.set(Some(error_text(&e))),
            }
        }
    });
    let start = move || {
        error.set(None);
        notice.set(None);
    };

    view! {
        <tr data-testid="user-row" data-username=user.username.clone() class:revoked=!active>
            <td>
                <strong>{user.username.clone()}</strong>
                <div class="small muted">{user.display_name.clone()}" · "{bangkok_time(&user.created_at)}</div>
            </td>
            <td><RoleSelect role testid="user-role" label=Signal::derive({
                let name = user.username.clone();
                move || format!("{} {name}", i18n.t("users.role_of"))
            })/></td>
            <td>
                <Show when=move || role.get() == Role::ProjectAdmin fallback=|| "—">
                    <ProjectChecks projects chosen testid="user-project"/>
                </Show>
                <div>
                    <button type="button" class="secondary small" data-testid="user-save"
                        disabled=move || save.pending().get()
                        on:click=move |_| {
                            start();
                            let r = role.get_untracked();
                            let ids = if r == Role::ProjectAdmin { chosen.get_untracked() } else { Vec::new() };
                            save.dispatch(UserUpdate { role: r, admin_project_ids: ids });
                        }>
                        {move || i18n.t("users.save")}
                    </button>
                </div>
            </td>
            <td>
                <span data-testid="user-state">{move || if active { i18n.t("users.active") } else { i18n.t("users.inactive") }}</span>
                " "
                {(id != me).then(|| if active {
                    view! {
                        <button type="button" class="danger small" data-testid="user-deactivate"
                            disabled=move || toggle.pending().get()
                            on:click=move |_| { start(); toggle.dispatch(false); }>
                            {move || i18n.t("users.deactivate")}
                        </button>
                    }.into_any()
                } else {
                    view! {
                        <button type="button" class="secondary small" data-testid="user-reactivate"
                            disabled=move || toggle.pending().get()
                            on:click=move |_| { start(); toggle.dispatch(true); }>
                            {move || i18n.t("users.reactivate")}
                        </button>
                    }.into_any()
                })}
            </td>
            <td>
                <input type="password" autocomplete="new-password" data-testid="user-new-password"
                    aria-label={
                        let name = user.username.clone();
                        move || format!("{} {name}", i18n.t("users.new_password_of"))
                    }
                    prop:value=move || new_password.get() on:input=move |ev| new_password.set(event_target_value(&ev))/>
                <button type="button" class="secondary small" data-testid="user-set-password"
                    disabled=move || set_password.pending().get() || new_password.with(String::is_empty)
                    on:click=move |_| { start(); set_password.dispatch(new_password.get_untracked()); }>
                    {move || i18n.t("users.set_password")}
                </button>
            </td>
        </tr>
    }
}
