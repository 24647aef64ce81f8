//! Page loads that clients abandon mid-response — a browser navigating away, a phone losing signal, a load
//! balancer's probe timing out — must never wedge the server. Leptos 0.8's SSR could block a runtime worker for good
//! when a client hung up during a render that reached `<Redirect>` (a reactive owner torn down while a context was
//! read: leptos-rs/leptos#4673, #4851). A wedged worker shows as a stop that never ends: the runtime waits for it.
//!
//! A render cut off before its stream was drained also left its reactive tree behind, for good: its resources'
//! futures, held by the render's shared context, which their owners hold in turn (a cycle), and each resource's task
//! waiting forever — about 0.6 tasks and 5 KB per abandoned load, the soak's memory growth (`page_owner.rs`).
//!
//! This hammers the server process with thousands of page loads, with and without a session, each cut off at a
//! different point of its answer, then checks that the server still answers, that no request is left in flight
//! (`docnum_requests_in_flight`), that no task is left behind (`docnum_runtime_alive_tasks`), that SIGTERM ends
//! it cleanly within 10 s, and that none of those renders panicked on its way down (a `Suspense` boundary's effect,
//! woken by a resource's answer on another worker, rendered children the cleanup had disposed: about 30 panics in the
//! log per 10,000 loads before `Owner::pause_and_wait`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::DocnumServer;

/// Pages that need a session (every page but `/login`) and the login page itself.
const PAGES: &[&str] = &["/", "/counters", "/templates", "/audit", "/resets", "/tokens", "/users", "/account", "/errors", "/logins", "/login"];

/// One page load, abandoned: the request goes out, then the client reads `read_bytes` of the answer (0: none), for
/// `patience` at most, and closes the connection — with a reset when `reset`, as a vanished peer does.
async fn abandon(addr: &str, path: &str, cookie: Option<&str>, read_bytes: usize, patience: Duration, reset: bool) {
    let Ok(mut tcp) = TcpStream::connect(addr).await else { return };
    let cookie = cookie.map(|c| format!("Cookie: {c}\r\n")).unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/html\r\n{cookie}Connection: close\r\n\r\n");
    if tcp.write_all(request.as_bytes()).await.is_err() {
        return;
    }
    let mut buf = vec![0u8; read_bytes.max(1)];
    let mut got = 0;
    let give_up = tokio::time::Instant::now() + patience;
    while got < read_bytes {
        match tokio::time::timeout_at(give_up, tcp.read(&mut buf[got..])).await {
            Ok(Ok(n)) if n > 0 => got += n,
            _ => break,
        }
    }
    if reset {
        let _ = tcp.set_zero_linger();
    }
    drop(tcp);
}

/// `POST /api/v1/auth/login` as the bootstrap admin (`DocnumServer` sets its password).
async fn log_in(client: &reqwest::Client, base: &str) -> reqwest::Response {
    client
        .post(format!("{base}/api/v1/auth/login"))
        .json(&serde_json::json!({ "username": "admin", "password": "test-admin-password" }))
        .send()
        .await
        .unwrap()
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A gauge without labels from `/metrics`.
async fn gauge(client: &reqwest::Client, base: &str, name: &str) -> f64 {
    let text = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("{name} exported"))
}

/// `docnum_requests_in_flight` (the scrape itself is one of them).
async fn in_flight(client: &reqwest::Client, base: &str) -> f64 {
    gauge(client, base, "docnum_requests_in_flight").await
}

/// `docnum_runtime_alive_tasks`, once it has stopped falling: tasks of requests that just ended may take a moment.
async fn settled_tasks(client: &reqwest::Client, base: &str) -> f64 {
    let mut last = gauge(client, base, "docnum_runtime_alive_tasks").await;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = gauge(client, base, "docnum_runtime_alive_tasks").await;
        if now >= last {
            return now.min(last);
        }
        last = now;
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousands_of_abandoned_page_loads_leave_the_server_answering_and_stoppable() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("abandoned.db").display());
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    // a grace longer than the 10 s the stop is given below: a wedged request must not be hidden by the deadline
    // its log to a file, read at the end
    let log_path = dir.path().join("server.log");
    let mut server = DocnumServer::start_logging(&db_url, &[("SHUTDOWN_GRACE_SECS", "30".into())], std::fs::File::create(&log_path).unwrap());
    server.wait_healthy(&client).await;

    let login = log_in(&client, &server.base).await;
    assert!(login.status().is_success(), "login: {}", login.status());
    let cookie = login
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("docnum_session="))
        .map(|v| v.split(';').next().unwrap().to_string())
        .expect("a session cookie");

    // warm: each page rendered once to its end, with the session; then the runtime's tasks, as a baseline
    for path in PAGES {
        let page = client.get(format!("{}{path}", server.base)).header("Cookie", &cookie).send().await.unwrap();
        assert_eq!(page.status(), 200, "{path}");
        page.text().await.unwrap();
    }
    let tasks_before = settled_tasks(&client, &server.base).await;

    let addr = server.base.trim_start_matches("http://").to_string();
    let loads: usize = std::env::var("ABANDONED_PAGE_LOADS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let clients = 32;
    let tasks = (0..clients).map(|c| {
        let (addr, cookie) = (addr.clone(), cookie.clone());
        tokio::spawn(async move {
            for i in (c..loads).step_by(clients) {
                let path = PAGES[i % PAGES.len()];
                let with_session = (i / PAGES.len()).is_multiple_of(2);
                // cut off at different points: before the head arrives, inside the head, inside the streamed body,
                // or after a while, wherever the render then is
                let read_bytes = [0, 1, 200, 2_000, 8_000, 30_000, 1_000_000][i % 7];
                let patience = Duration::from_micros([0, 300, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000][i % 8]);
                abandon(&addr, path, with_session.then_some(cookie.as_str()), read_bytes, patience, i.is_multiple_of(3)).await;
            }
        })
    });
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }

    // the server still answers, both pages and the API
    let health = client.get(format!("{}/health", server.base)).send().await.expect("/health answers after the abandoned loads");
    assert_eq!(health.status(), 200);
    let page = client.get(format!("{}/login", server.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    // every abandoned request has ended: after a moment, only the scrape itself is in flight
    let mut left = f64::MAX;
    for _ in 0..50 {
        left = in_flight(&client, &server.base).await;
        if left <= 1.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 1.0, "requests still in flight long after their clients hung up");
    // and nothing of theirs is left running: the runtime holds as many tasks as before them (give or take a few
    // connections and background jobs), not one per abandoned render
    let tasks_after = settled_tasks(&client, &server.base).await;
    assert!(
        tasks_after <= tasks_before + 50.0,
        "{loads} abandoned page loads left tasks behind: {tasks_before} alive before them, {tasks_after} after"
    );

    // and a stop ends, cleanly, well inside its grace time (a wedged worker keeps the runtime from ever finishing)
    let status = server.terminate().await;
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(status.success(), "the stop after abandoned page loads exited with {status}; the server's log ends:\n{}", tail(&log, 40));
    assert!(!log.contains("request still in flight"), "the stop reported requests left in flight:\n{}", tail(&log, 40));
    let lines_with = |needle: &str| -> (usize, String) {
        let found: Vec<&str> = log.lines().filter(|l| l.contains(needle)).collect();
        (found.len(), found.iter().take(3).copied().collect::<Vec<_>>().join("\n"))
    };
    // and no render torn down by its client's leaving panicked: a real panic must not drown among those
    let (panics, first) = lines_with("panicked at");
    assert_eq!(panics, 0, "{panics} panics in the log of {loads} abandoned page loads, the first:\n{first}");
    // nor logged an error: a server function that runs on in a render its client left finds the request gone, which is
    // no fault of the server (before, an internal error was logged for each: 8 in this test's 10,000 loads)
    let (errors, first) = lines_with("ERROR");
    assert_eq!(errors, 0, "{errors} errors in the log of {loads} abandoned page loads, the first:\n{first}");
}

/// A page that needs a session, requested without one, is answered by the server before any rendering: a `303`
/// to `/login` (so no `<Redirect>` ever runs in a server render). With a session, the page renders.
#[tokio::test]
async fn pages_that_need_a_session_send_a_visitor_without_one_to_login() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("redirect.db").display());
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).timeout(Duration::from_secs(10)).build().unwrap();
    let server = DocnumServer::start(&db_url, &[]);
    server.wait_healthy(&client).await;
    for path in PAGES.iter().filter(|p| **p != "/login") {
        let r = client.get(format!("{}{path}", server.base)).send().await.unwrap();
        assert_eq!(r.status(), 303, "{path} without a session");
        assert_eq!(r.headers()["location"], "/login", "{path}");
        let r = client.head(format!("{}{path}", server.base)).send().await.unwrap();
        assert_eq!(r.status(), 303, "HEAD {path} without a session");
    }
    let r = client.get(format!("{}/login", server.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    // an unknown page is still the 404 page, not a redirect
    let r = client.get(format!("{}/no-such-page", server.base)).send().await.unwrap();
    assert_eq!(r.status(), 404);

    let with_session = reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let login = log_in(&with_session, &server.base).await;
    assert!(login.status().is_success());
    let r = with_session.get(format!("{}/counters", server.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("<main"), "the page rendered");
}

/// A stop has a deadline (docs/operations/README.md#deployment-modes): with a request that never finishes (its body never comes), SIGTERM waits out
/// `SHUTDOWN_GRACE_SECS`, logs the request still in flight with its route and age, and exits with status 1 — within
/// the grace time plus 2 s, not whenever the client pleases.
#[tokio::test]
async fn a_stop_with_a_request_stuck_past_its_grace_time_ends_and_says_what_was_left() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite://{}", dir.path().join("stuck.db").display());
    let log_path = dir.path().join("server.log");
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let grace = Duration::from_secs(2);
    let mut server = DocnumServer::start_logging(
        &db_url,
        &[("SHUTDOWN_GRACE_SECS", grace.as_secs().to_string()), ("RUST_LOG", "info".into())],
        std::fs::File::create(&log_path).unwrap(),
    );
    server.wait_healthy(&client).await;

    // a login whose body never arrives: routed, its handler waits for the rest
    let addr = server.base.trim_start_matches("http://").to_string();
    let mut stuck = TcpStream::connect(&addr).await.unwrap();
    let head = format!("POST /api/v1/auth/login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"user");
    stuck.write_all(head.as_bytes()).await.unwrap();
    let mut seen = 0.0;
    for _ in 0..50 {
        seen = in_flight(&client, &server.base).await;
        if seen >= 2.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, 2.0, "the stuck login and the scrape are in flight");

    let (status, took) = server.terminate_within(grace + Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(1), "a stop past its deadline exits non-zero");
    assert!(took >= grace, "the request in flight got its grace time ({took:?})");
    assert!(took <= grace + Duration::from_secs(2), "ended within the grace time plus 2 s ({took:?})");
    let log = std::fs::read_to_string(&log_path).unwrap();
    let line = log.lines().find(|l| l.contains("request still in flight")).unwrap_or_else(|| panic!("no in-flight report in the log:\n{log}"));
    assert!(line.contains("/api/v1/auth/login") && line.contains("age_secs"), "{line}");
    drop(stuck);
}

/// Counting a request in flight until its body has gone must not change the answer: a JSON answer keeps its
/// `Content-Length` (the in-flight wrapper once dropped the body's size hint, and hyper sent every answer chunked —
/// which the load generator's lean client could not read: every reserve of the cluster harness "failed").
#[tokio::test]
async fn answers_keep_their_content_length_while_counted_in_flight() {
    let app = crate::common::TestApp::spawn().await;
    for path in ["/health", "/api/v1/openapi.json"] {
        let r = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers().get(reqwest::header::TRANSFER_ENCODING).is_none(), "{path} answered chunked");
        let length: usize = r.headers()[reqwest::header::CONTENT_LENGTH].to_str().unwrap().parse().unwrap();
        assert_eq!(length, r.bytes().await.unwrap().len(), "{path}");
    }
}
