//! The staff pages without scripts (`server::auth::forms`, `server::numbering::forms`): the first HTML carries the
//! forms and their choice lists; log in, choose in steps, reserve, confirm, cancel and log out by plain form posts
//! answered `303 See Other`, what each did shown once on the page it goes back to. A browser with scripts off does the
//! same in end2end/tests/noscript.spec.ts.

use docnum::contract::Role;
use docnum::server::auth;
use reqwest::header::{CONTENT_TYPE, LOCATION, ORIGIN};
use reqwest::{Client, StatusCode};
use sqlx::Row;

use crate::common::*;

/// A browser with scripts off: keeps the cookie, sends the page's `Origin` on a post, follows no redirect by itself.
fn form_browser(app: &TestApp) -> Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(ORIGIN, app.base.parse().unwrap());
    Client::builder()
        .cookie_store(true)
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap()
}

/// Posts a form; returns the status and where it sends the browser.
async fn post_form(app: &TestApp, client: &Client, path: &str, fields: &[(&str, String)]) -> (StatusCode, String) {
    let r = client.post(app.url(path)).form(fields).send().await.unwrap();
    let location = r.headers().get(LOCATION).map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
    (r.status(), location)
}

async fn page(app: &TestApp, client: &Client, address: &str) -> (StatusCode, String) {
    let r = client.get(app.url(address)).send().await.unwrap();
    (r.status(), r.text().await.unwrap())
}

async fn id_of(app: &TestApp, table: &str, code: &str) -> i64 {
    sqlx::query(&format!("SELECT id FROM {table} WHERE code = ?")).bind(code).fetch_one(&app.state.db.pool).await.unwrap().get::<i64, _>(0)
}

/// The value of the hidden field `name` in `html`.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| {
        panic!("no field {name} in the page: {}", &html[html.find("name=\"token\"").unwrap_or(0)..].chars().take(600).collect::<String>())
    }) + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}

/// The text of the card's number (`data-testid="reserved-number"`), without the markup that lets it wrap.
fn shown_number(html: &str) -> String {
    let at = html.find(r#"data-testid="reserved-number""#).expect("a number on the card");
    let inner = &html[at..];
    let inner = &inner[inner.find('>').unwrap() + 1..inner.find("</div>").unwrap()];
    let mut text = String::new();
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

async fn status_of(app: &TestApp, token: &str) -> (String, String) {
    let row = sqlx::query("SELECT status, number FROM document_numbers WHERE token = ?").bind(token).fetch_one(&app.state.db.pool).await.unwrap();
    (row.get::<String, _>(0), row.get::<String, _>(1))
}

struct Letter {
    project: String,
    ctype: String,
    originator: String,
    recipient: String,
}

async fn letter_ids(app: &TestApp) -> Letter {
    Letter {
        project: app.project_id("LCBP3").await.to_string(),
        ctype: id_of(app, "correspondence_types", "LETTER").await.to_string(),
        originator: id_of(app, "organizations", "คคง.").await.to_string(),
        recipient: id_of(app, "organizations", "สคฉ.3").await.to_string(),
    }
}

async fn log_in(app: &TestApp, client: &Client, password: &str) -> (StatusCode, String) {
    post_form(app, client, "/forms/login", &[("username", "admin".into()), ("password", password.into())]).await
}

#[tokio::test]
async fn a_person_without_scripts_logs_in_takes_confirms_and_cancels_numbers_and_logs_out() {
    let app = TestApp::spawn().await;
    let browser = form_browser(&app);

    // the login page is a form that posts itself; a refusal is said once, on the page it goes back to
    let (status, html) = page(&app, &browser, "/login").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"action="/forms/login""#), "the login form posts without scripts");
    assert_eq!(log_in(&app, &browser, "wrong-password").await, (StatusCode::SEE_OTHER, "/login".to_string()));
    let (_, html) = page(&app, &browser, "/login").await;
    assert!(html.contains("ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง"), "the refusal in Thai");
    let (_, html) = page(&app, &browser, "/login").await;
    assert!(!html.contains("ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง"), "said once");
    assert_eq!(log_in(&app, &browser, ADMIN_PASSWORD).await, (StatusCode::SEE_OTHER, "/".to_string()));

    // the first HTML carries the form and its choice lists, not fragments a script puts in place
    let ids = letter_ids(&app).await;
    let (status, html) = page(&app, &browser, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"action="/forms/reserve""#));
    assert!(html.contains(r#"name="project""#) && html.contains(r#"name="type""#));
    assert!(html.contains(&format!(r#"<option value="{}""#, ids.project)), "the projects are in the list");
    assert!(!html.contains(r#"name="originator""#), "the parts come once the project and type are chosen");

    // the step: the project and type chosen, the template's parts are asked for, chosen as they were
    let step = format!("/?project={}&type={}", ids.project, ids.ctype);
    let (_, html) = page(&app, &browser, &step).await;
    assert!(html.contains(r#"name="originator""#) && html.contains(r#"name="recipient""#), "LETTER shows originator and recipient");
    let chosen = html.find(&format!(r#"<option value="{}""#, ids.project)).map(|at| html[at..].split('>').next().unwrap()).unwrap_or("");
    assert!(chosen.contains("selected"), "the project stays chosen: {chosen}");
    assert!(html.contains("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}"), "the template in use");

    // a part missing: refused with the reason, nothing reserved
    let numbers_before = app.count("SELECT COUNT(*) FROM document_numbers").await;
    let partial = vec![("project", ids.project.clone()), ("type", ids.ctype.clone()), ("originator", ids.originator.clone())];
    let (status, back) = post_form(&app, &browser, "/forms/reserve", &partial).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-testid="error""#), "the refusal is shown");
    assert!(!html.contains(r#"data-testid="reserved-number""#));
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, numbers_before);

    // reserve: back to the same choices, the number on the card
    let mut full = partial.clone();
    full.push(("recipient", ids.recipient.clone()));
    let (status, back) = post_form(&app, &browser, "/forms/reserve", &full).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(back, format!("/?project={}&type={}&originator={}&recipient={}", ids.project, ids.ctype, ids.originator, ids.recipient));
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-testid="reserved-number""#));
    assert!(html.contains(r#"data-status="RESERVED""#));
    let token = hidden(&html, "token");
    let (status, number) = status_of(&app, &token).await;
    assert_eq!((status.as_str(), number.as_str()), ("RESERVED", "คคง.-สคฉ.3-0001-2568"));
    assert_eq!(shown_number(&html), "คคง.-สคฉ.3-0001-2568", "the card shows the number");
    // its forms are the server's availableActions for a held number: confirm and cancel
    assert!(html.contains(r#"data-testid="confirm-form""#) && html.contains(r#"data-testid="cancel-form""#));

    // confirm it with a document id
    let named = |token: &str, html: &str| {
        vec![
            ("token", token.to_string()),
            ("number", hidden(html, "number")),
            ("expiresAt", hidden(html, "expiresAt")),
            ("project", ids.project.clone()),
            ("type", ids.ctype.clone()),
        ]
    };
    let mut confirm = named(&token, &html);
    confirm.push(("documentId", "DOC-NOSCRIPT-1".into()));
    let (status, back) = post_form(&app, &browser, "/forms/confirm", &confirm).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-status="CONFIRMED""#));
    assert_eq!(shown_number(&html), "คคง.-สคฉ.3-0001-2568");
    // confirmed, the actions offered (revise) are not the card's: no form is left on it
    assert!(!html.contains(r#"data-testid="confirm-form""#) && !html.contains(r#"data-testid="cancel-form""#));
    assert_eq!(status_of(&app, &token).await.0, "CONFIRMED");

    // another, cancelled with a reason
    post_form(&app, &browser, "/forms/reserve", &full).await;
    let (_, html) = page(&app, &browser, &back).await;
    let second = hidden(&html, "token");
    assert_ne!(second, token);
    let mut cancel = named(&second, &html);
    cancel.push(("reason", "ออกซ้ำโดยไม่ตั้งใจ".into()));
    post_form(&app, &browser, "/forms/cancel", &cancel).await;
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-status="CANCELLED""#));
    let (status, number) = status_of(&app, &second).await;
    assert_eq!((status.as_str(), number.as_str()), ("CANCELLED", "คคง.-สคฉ.3-0002-2568"));
    let reason: String =
        sqlx::query("SELECT cancel_reason FROM document_numbers WHERE token = ?").bind(&second).fetch_one(&app.state.db.pool).await.unwrap().get(0);
    assert_eq!(reason, "ออกซ้ำโดยไม่ตั้งใจ");

    // confirming the cancelled one again: refused, said on the page, the number stays cancelled
    let mut again: Vec<_> = cancel.iter().filter(|(k, _)| *k != "reason").cloned().collect();
    again.push(("documentId", "DOC-NOSCRIPT-2".into()));
    post_form(&app, &browser, "/forms/confirm", &again).await;
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-testid="error""#));
    assert_eq!(status_of(&app, &second).await.0, "CANCELLED");

    // log out: the pages send the browser to the login page again
    assert_eq!(post_form(&app, &browser, "/forms/logout", &[]).await, (StatusCode::SEE_OTHER, "/login".to_string()));
    let r = browser.get(app.url("/")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn form_posts_are_refused_from_another_site_without_a_session_or_without_a_form() {
    let app = TestApp::spawn().await;
    let ids = letter_ids(&app).await;
    let fields = vec![("project", ids.project), ("type", ids.ctype), ("originator", ids.originator), ("recipient", ids.recipient)];

    // no session: to the login page, nothing reserved
    let anonymous = form_browser(&app);
    assert_eq!(post_form(&app, &anonymous, "/forms/reserve", &fields).await, (StatusCode::SEE_OTHER, "/login".to_string()));

    // a session, but the post comes from another site: 403, nothing reserved
    let browser = form_browser(&app);
    log_in(&app, &browser, ADMIN_PASSWORD).await;
    let r = browser.post(app.url("/forms/reserve")).header(ORIGIN, "https://evil.example").form(&fields).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // not a form: 400 with the Thai message
    let r = browser.post(app.url("/forms/reserve")).header(CONTENT_TYPE, "application/json").body("{}").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "VALIDATION_ERROR");
    assert!(body["message"].as_str().unwrap().contains("แบบฟอร์ม"));

    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);
}

#[tokio::test]
async fn the_staff_pages_load_no_leptos_bundle_and_the_language_switch_is_a_form() {
    let app = TestApp::spawn().await;
    let browser = form_browser(&app);

    // the login page loads no script: no bundle, no hydration
    let (status, html) = page(&app, &browser, "/login").await;
    assert_eq!(status, StatusCode::OK);
    for script in [r#"type="module""#, "docnum.js", ".wasm", "<script src"] {
        assert!(!html.contains(script), "the login page loads a script ({script})");
    }
    assert!(html.contains(r#"<html lang="th""#));
    assert!(html.contains(r#"action="/forms/lang""#));

    // the reserve page loads the staff script alone, with the page's nonce; never the Leptos bundle
    log_in(&app, &browser, ADMIN_PASSWORD).await;
    // the login page with a session answers every time (a read awaited straight in its suspense once left one
    // render in three waiting for good)
    for _ in 0..20 {
        assert_eq!(page(&app, &browser, "/login").await.0, StatusCode::OK);
    }
    let r = browser.get(app.url("/")).send().await.unwrap();
    let csp = r.headers()[reqwest::header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_string();
    let html = r.text().await.unwrap();
    assert!(html.contains("import start from '/pkg/staff.js';start({module_or_path:'/pkg/staff_bg.wasm'});"), "the staff script");
    let nonce = csp.split("'nonce-").nth(1).and_then(|rest| rest.split('\'').next()).expect("a nonce");
    assert!(html.contains(&format!(r#"<script type="module" nonce="{nonce}">"#)), "the script carries the page's nonce");
    for bundle in ["docnum.js", "docnum_bg.wasm", "hydrate"] {
        assert!(!html.contains(bundle), "the reserve page loads the Leptos bundle ({bundle})");
    }
    assert!(html.contains(r#"id="reserve-root""#) && html.contains(r#"data-events="/api/v1/events""#), "the part the script draws again");
    post_form(&app, &browser, "/forms/logout", &[]).await;

    // the switch: the cookie, then back to the page it was on
    let r = browser.post(app.url("/forms/lang")).form(&[("lang", "en"), ("back", "/login")]).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[LOCATION], "/login");
    let cookie = r.headers()[reqwest::header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(cookie.starts_with("docnum_lang=en;"), "{cookie}");
    let (_, html) = page(&app, &browser, "/login").await;
    assert!(html.contains(r#"<html lang="en""#));
    assert!(html.contains(r#"name="lang" value="th""#), "the switch offers Thai next");
    // a refusal is said in the page's language
    assert_eq!(log_in(&app, &browser, "wrong-password").await, (StatusCode::SEE_OTHER, "/login".to_string()));
    let (_, html) = page(&app, &browser, "/login").await;
    assert!(html.contains("The username or password is wrong") && !html.contains("ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง"), "the refusal in English");

    // never to another site
    for elsewhere in ["https://evil.example/", "//evil.example/", "/\\evil.example"] {
        let (status, location) = post_form(&app, &browser, "/forms/lang", &[("lang", "th".into()), ("back", elsewhere.into())]).await;
        assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/"), "{elsewhere}");
    }

    // a language it does not speak: 400 with the Thai message, no cookie
    let r = browser.post(app.url("/forms/lang")).form(&[("lang", "fr"), ("back", "/login")]).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.headers().get(reqwest::header::SET_COOKIE).is_none());
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "VALIDATION_ERROR");
    assert!(body["message"].as_str().unwrap().contains("ภาษา"));
}

/// The rows of the block shown on the blocks page, as (sequence, status), and how many confirm forms it offers.
fn block_rows(html: &str) -> (Vec<(String, String)>, usize) {
    let rows = html
        .split(r#"data-testid="block-number""#)
        .skip(1)
        .map(|row| {
            let attr = |name: &str| {
                let marker = format!("{name}=\"");
                let at = row.find(&marker).unwrap() + marker.len();
                row[at..].split('"').next().unwrap().to_string()
            };
            (attr("data-sequence"), attr("data-status"))
        })
        .collect();
    (rows, html.matches(r#"data-testid="block-confirm-form""#).count())
}

#[tokio::test]
async fn a_person_without_scripts_takes_a_block_confirms_and_cancels_its_numbers_and_no_one_else_sees_it() {
    let app = TestApp::spawn().await;
    for name in ["site", "other"] {
        auth::system::create_user(&app.state.db, name, name, STAFF_PASSWORD, Role::Staff).await.unwrap();
    }
    let browser = form_browser(&app);
    let (status, _) = post_form(&app, &browser, "/forms/login", &[("username", "site".into()), ("password", STAFF_PASSWORD.into())]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    // no choices yet: the way to them, no form, no blocks
    let (status, html) = page(&app, &browser, "/blocks").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"data-testid="block-how""#) && !html.contains(r#"data-testid="block-form""#), "{html}");
    assert!(html.contains(r#"data-testid="blocks-none""#));

    // the reserve page links the blocks page with its choices; there the form, and the number a block would start at
    let ids = letter_ids(&app).await;
    let choices = format!("project={}&type={}&originator={}&recipient={}", ids.project, ids.ctype, ids.originator, ids.recipient);
    let (_, html) = page(&app, &browser, &format!("/?{choices}")).await;
    assert!(html.contains(&format!(r#"href="/blocks?{}""#, choices.replace('&', "&amp;"))), "the reserve page links its choices' block");
    let (_, html) = page(&app, &browser, &format!("/blocks?{choices}")).await;
    assert!(html.contains(r#"action="/forms/block/reserve""#));
    assert!(html.contains("คคง.-สคฉ.3-0001-2568"), "the first number of the block");

    let fields = |extra: &[(&'static str, String)]| {
        let mut f = vec![
            ("project", ids.project.clone()),
            ("type", ids.ctype.clone()),
            ("originator", ids.originator.clone()),
            ("recipient", ids.recipient.clone()),
        ];
        f.extend_from_slice(extra);
        f
    };
    // refused (one number is not a block): said once on the form's page, nothing taken
    let (status, back) = post_form(&app, &browser, "/forms/block/reserve", &fields(&[("count", "1".into())])).await;
    assert_eq!((status, back.as_str()), (StatusCode::SEE_OTHER, format!("/blocks?{choices}").as_str()));
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-testid="error""#));
    let (_, html) = page(&app, &browser, &back).await;
    assert!(!html.contains(r#"data-testid="error""#), "said once");
    assert_eq!(app.count("SELECT COUNT(*) FROM document_numbers").await, 0);

    // five, for a subcontractor, until a day: back to the block
    let until = (app.clock.now() + chrono::Duration::days(2)).format("%Y-%m-%d").to_string();
    let taken = fields(&[("count", "5".into()), ("holder", "ผรม.1".into()), ("holdUntil", until.clone())]);
    let (status, back) = post_form(&app, &browser, "/forms/block/reserve", &taken).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let block = back.strip_prefix("/blocks?block=").expect("back to the block").to_string();
    let (_, html) = page(&app, &browser, &back).await;
    let (rows, confirm_forms) = block_rows(&html);
    assert_eq!(rows, (1..=5).map(|q| (q.to_string(), "RESERVED".to_string())).collect::<Vec<_>>());
    assert_eq!(confirm_forms, 5);
    assert!(html.contains("ผรม.1") && html.contains("คคง.-สคฉ.3-0005-2568"));
    let expires: Vec<i64> =
        sqlx::query_scalar("SELECT expires_at FROM document_numbers ORDER BY sequence").fetch_all(&app.state.db.pool).await.unwrap();
    let end_of_day = chrono::NaiveDate::parse_from_str(&until, "%Y-%m-%d").unwrap().succ_opt().unwrap().and_hms_opt(0, 0, 0).unwrap();
    assert!(
        expires.iter().all(|e| *e / 1000 == end_of_day.and_utc().timestamp() - 7 * 3_600),
        "held until the end of {until} in Bangkok: {expires:?} {end_of_day}"
    );

    // the first confirmed with its document, the second cancelled: each on its own
    let token = hidden(&html, "token");
    let confirm = vec![("token", token.clone()), ("block", block.clone()), ("documentId", "DOC-BLOCK-1".into())];
    assert_eq!(post_form(&app, &browser, "/forms/block/confirm", &confirm).await, (StatusCode::SEE_OTHER, back.clone()));
    let (_, html) = page(&app, &browser, &back).await;
    let second = hidden(&html, "token");
    assert_ne!(second, token);
    let cancel = vec![("token", second.clone()), ("block", block.clone())];
    assert_eq!(post_form(&app, &browser, "/forms/block/cancel", &cancel).await, (StatusCode::SEE_OTHER, back.clone()));
    let (_, html) = page(&app, &browser, &back).await;
    let (rows, confirm_forms) = block_rows(&html);
    let statuses: Vec<&str> = rows.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(statuses, ["CONFIRMED", "CANCELLED", "RESERVED", "RESERVED", "RESERVED"]);
    assert_eq!(confirm_forms, 3);
    assert_eq!(status_of(&app, &token).await.0, "CONFIRMED");
    // confirming it again for another document: refused, said on the page
    let other_document = vec![("token", token.clone()), ("block", block.clone()), ("documentId", "DOC-BLOCK-9".into())];
    post_form(&app, &browser, "/forms/block/confirm", &other_document).await;
    let (_, html) = page(&app, &browser, &back).await;
    assert!(html.contains(r#"data-testid="error""#));

    // over REST: the list says how far it is used; the tokens are the reserver's
    let site = app.login("site", STAFF_PASSWORD).await;
    let list: serde_json::Value = site.get(app.url("/api/v1/document-numbering/blocks")).send().await.unwrap().json().await.unwrap();
    let b = &list[0];
    assert_eq!((b["blockId"].as_str(), b["count"].as_i64(), b["held"].as_i64()), (Some(block.as_str()), Some(5), Some(3)));
    assert_eq!((b["confirmed"].as_i64(), b["cancelled"].as_i64(), b["expired"].as_i64()), (Some(1), Some(1), Some(0)));
    assert_eq!((b["holder"].as_str(), b["reservedBy"].as_str()), (Some("ผรม.1"), Some("site")));
    assert_eq!((b["firstNumber"].as_str(), b["lastNumber"].as_str()), (Some("คคง.-สคฉ.3-0001-2568"), Some("คคง.-สคฉ.3-0005-2568")));

    // another staff member sees neither the block nor its tokens: the same 404 as for no block at all
    let other = app.login("other", STAFF_PASSWORD).await;
    let list: serde_json::Value = other.get(app.url("/api/v1/document-numbering/blocks")).send().await.unwrap().json().await.unwrap();
    assert_eq!(list, serde_json::json!([]));
    for id in [block.clone(), uuid::Uuid::new_v4().to_string(), "not-a-block".into()] {
        let r = other.get(app.url(&format!("/api/v1/document-numbering/blocks/{id}"))).send().await.unwrap();
        let status = r.status();
        assert_error(status, &r.json().await.unwrap(), 404, "NOT_FOUND");
    }
    // a super admin sees it, without the tokens
    let admin = app.login("admin", ADMIN_PASSWORD).await;
    let detail: serde_json::Value =
        admin.get(app.url(&format!("/api/v1/document-numbering/blocks/{block}"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(detail["numbers"].as_array().unwrap().len(), 5);
    assert!(detail["numbers"].as_array().unwrap().iter().all(|n| n.get("token").is_none()), "{detail}");
    assert_eq!(detail["numbers"][0]["availableActions"], serde_json::json!(["REVISE", "VOID"]));
}
