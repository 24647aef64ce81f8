//! The log's witnesses (C2SP tlog-witness, tlog-cosignature): a witness on its own port cosigns the service's
//! checkpoints, the receipts then name it; a forged history signed with the log's own key, a checkpoint of another
//! key, a rolled-back log and malformed requests are refused with the protocol's statuses, and the witness's state
//! moves only forward, across its restarts.

use std::sync::Arc;
use std::time::Duration;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use docnum::receipt::{self, Cosigned, TreeHash};
use docnum::server::config::{LogConfig, LogWitness};
use docnum::server::tlog::cosign::Outcome;
use docnum::server::tlog::witness::{self, Witness, WitnessConfig};
use reqwest::StatusCode;
use serde_json::Value;

use crate::common::*;

/// A witness served on `listener` for the log of `log_vkey`, its state in `state_file`.
async fn serve_witness(listener: tokio::net::TcpListener, skey: &str, log_vkey: &str, state_file: &std::path::Path) -> Arc<Witness> {
    let config = WitnessConfig { signing_key: skey.to_string(), logs: vec![log_vkey.to_string()], state_file: state_file.to_path_buf() };
    let w = Arc::new(Witness::open(&config).unwrap());
    let router = witness::router(w.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    w
}

struct Setup {
    app: TestApp,
    witness: Arc<Witness>,
    wvkey: String,
    url: String,
    skey: String,
    dir: tempfile::TempDir,
}

/// A service whose log is witnessed by one witness of `name` (checkpoints signed only when the test says).
async fn setup(name: &str) -> Setup {
    let (skey, wvkey) = witness::generate_key(name).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = LogConfig {
        checkpoint_interval: Duration::from_secs(3600),
        witnesses: vec![LogWitness { vkey: wvkey.clone(), url: url.clone() }],
        witness_timeout: Duration::from_secs(5),
        ..LogConfig::default()
    };
    let app = TestApp::spawn_with(Options { log, ..Options::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let witness = serve_witness(listener, &skey, app.state.tlog.vkey(), &dir.path().join("state.json")).await;
    Setup { app, witness, wvkey, url, skey, dir }
}

async fn reserve(app: &TestApp, n: usize) -> Vec<String> {
    let mut numbers = Vec::new();
    for _ in 0..n {
        let (s, r) = app.reserve(&letter()).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        numbers.push(r["documentNumber"].as_str().unwrap().to_string());
    }
    numbers
}

async fn round(app: &TestApp) -> Vec<Option<Outcome>> {
    app.state.log_witnesses.as_ref().expect("witnesses configured").round().await.unwrap()
}

async fn refusals(app: &TestApp, name: &str) -> f64 {
    let text = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let series = format!("docnum_log_witness_refusals_total{{witness=\"{name}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(series.as_str())).unwrap_or_else(|| panic!("no {series} in the scrape")).parse().unwrap()
}

async fn post(url: &str, body: String) -> (StatusCode, String, String) {
    let r = reqwest::Client::new().post(format!("{url}/add-checkpoint")).body(body).send().await.unwrap();
    let ct = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (r.status(), ct, r.text().await.unwrap())
}

fn request(old: u64, proof: &[TreeHash], note: &str) -> String {
    let mut s = format!("old {old}\n");
    for h in proof {
        s.push_str(&BASE64_STANDARD.encode(h.0));
        s.push('\n');
    }
    s.push('\n');
    s.push_str(note);
    s
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[tokio::test]
async fn checkpoints_are_cosigned_and_a_receipt_names_the_witness() {
    let Setup { app, witness, wvkey, dir: _dir, .. } = setup("witness.test/cosigns").await;
    let origin = app.state.tlog.origin().to_string();
    let log_key = app.state.tlog.vkey().to_string();
    // the collector in the background, woken by each checkpoint signed
    app.state.log_witnesses.clone().unwrap().spawn();
    let numbers = reserve(&app, 3).await;
    let before = now_secs();
    assert_eq!(app.state.tlog.catch_up().await.unwrap(), 3);
    let mut cosigned = String::new();
    for _ in 0..100 {
        cosigned = reqwest::get(app.url("/log/checkpoint")).await.unwrap().text().await.unwrap();
        if cosigned.contains("\n— witness.test/cosigns ") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = receipt::verify_checkpoint_witnessed(&cosigned, &log_key, &[&wvkey]).expect("the cosigned checkpoint verifies");
    assert_eq!(v.size, 3);
    assert_eq!(v.witnesses.len(), 1);
    assert_eq!(v.witnesses[0].name, "witness.test/cosigns");
    let Cosigned::At(time) = v.witnesses[0].cosigned else { panic!("not cosigned: {cosigned}") };
    assert!((before..=now_secs()).contains(&time), "{time}");
    assert!(v.other_signers.is_empty(), "{:?}", v.other_signers);
    assert_eq!(witness.tree(&origin).await.map(|t| t.size), Some(3));

    // the next checkpoint: a consistency proof from 3
    reserve(&app, 4).await;
    assert_eq!(app.state.tlog.catch_up().await.unwrap(), 7);
    for _ in 0..100 {
        if witness.tree(&origin).await.map(|t| t.size) == Some(7) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tree = witness.tree(&origin).await.unwrap();
    assert_eq!(tree.size, 7);
    assert_eq!(tree.root, BASE64_STANDARD.encode(app.state.tlog.root_at(7).await.unwrap().unwrap().0));
    let mut stored = String::new();
    for _ in 0..50 {
        stored = app.state.tlog.checkpoint().await.unwrap().unwrap();
        if stored.contains("— witness.test/cosigns ") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stored.matches("— witness.test/cosigns ").count(), 1, "{stored}");

    // a receipt carries the cosigned checkpoint
    let query = format!(
        "/api/v1/document-numbering/receipts?projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber={}",
        url::form_urlencoded::byte_serialize(numbers[0].as_bytes()).collect::<String>()
    );
    let text = reqwest::get(app.url(&query)).await.unwrap().text().await.unwrap();
    let checked = receipt::verify_witnessed(&text, &log_key, &[&wvkey]).expect("the receipt verifies");
    assert_eq!(checked.entry.number, numbers[0]);
    assert_eq!(checked.checkpoint.size, 7);
    assert!(matches!(checked.checkpoint.witnesses[0].cosigned, Cosigned::At(_)));
    assert!(checked.checkpoint.witnesses[0].time_rfc3339().unwrap().starts_with("20"));
    // without the witness's key its line is another signer's, not ignored
    assert_eq!(receipt::verify(&text, &log_key).unwrap().checkpoint.other_signers, vec!["witness.test/cosigns".to_string()]);
    // another witness's key: absent
    let (_, stranger) = witness::generate_key("witness.test/stranger").unwrap();
    assert_eq!(receipt::verify_witnessed(&text, &log_key, &[&stranger]).unwrap().checkpoint.witnesses[0].cosigned, Cosigned::Absent);

    // a cosignature line changed: reported invalid, the log's signature still good
    let line = text.lines().find(|l| l.starts_with("— witness.test/cosigns ")).unwrap();
    let mut sig = BASE64_STANDARD.decode(line.rsplit(' ').next().unwrap()).unwrap();
    sig[40] ^= 1;
    let forged_line = format!("— witness.test/cosigns {}", BASE64_STANDARD.encode(sig));
    let tampered = text.replace(line, &forged_line);
    assert_eq!(receipt::verify_witnessed(&tampered, &log_key, &[&wvkey]).unwrap().checkpoint.witnesses[0].cosigned, Cosigned::Invalid);

    // the command line names the witness and when it cosigned; a changed cosignature exits 2
    let dir = tempfile::tempdir().unwrap();
    let (file, bad, key_file) = (dir.path().join("r.tlog-proof"), dir.path().join("bad.tlog-proof"), dir.path().join("witness.vkey"));
    std::fs::write(&file, &text).unwrap();
    std::fs::write(&bad, &tampered).unwrap();
    std::fs::write(&key_file, format!("{wvkey}\n")).unwrap();
    let verify = |f: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_docnum"))
            .arg("verify")
            .arg(f)
            .arg("--key")
            .arg(&log_key)
            .arg("--witness")
            .arg(&key_file)
            .output()
            .unwrap()
    };
    let ok = verify(&file);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let report: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["witnesses"][0]["name"], "witness.test/cosigns");
    assert_eq!(report["witnesses"][0]["cosigned"], "yes");
    assert!(report["witnesses"][0]["time"].as_u64().is_some_and(|t| t >= before), "{report}");
    let refused = verify(&bad);
    assert_eq!(refused.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!((report["valid"].as_bool(), report["witnesses"][0]["cosigned"].as_str()), (Some(false), Some("invalid")));
}

async fn unanswered(app: &TestApp, name: &str) -> f64 {
    let text = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let series = format!("docnum_log_witness_unanswered_offers{{witness=\"{name}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(series.as_str())).unwrap_or_else(|| panic!("no {series} in the scrape")).parse().unwrap()
}

#[tokio::test]
async fn a_witness_that_does_not_answer_is_counted_until_it_answers() {
    let name = "witness.test/away";
    let (skey, wvkey) = witness::generate_key(name).unwrap();
    // a port held but not listened on (connections are refused) until the witness comes up on it: a port freed
    // instead could be taken meanwhile by another test's server
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let log = LogConfig {
        checkpoint_interval: Duration::from_secs(3600),
        witnesses: vec![LogWitness { vkey: wvkey, url: format!("http://{addr}") }],
        witness_timeout: Duration::from_secs(5),
        ..LogConfig::default()
    };
    let app = TestApp::spawn_with(Options { log, ..Options::default() }).await;
    assert_eq!(unanswered(&app, name).await, 0.0, "the series starts at zero");
    reserve(&app, 2).await;
    app.state.tlog.catch_up().await.unwrap();
    let first = round(&app).await;
    assert!(matches!(&first[..], [Some(Outcome::Failed { .. })]), "{first:?}");
    assert_eq!(unanswered(&app, name).await, 1.0);
    // within its wait it is not asked again, and the count stays
    assert_eq!(round(&app).await, vec![None]);
    assert_eq!(unanswered(&app, name).await, 1.0);

    let dir = tempfile::tempdir().unwrap();
    let listener = socket.listen(64).unwrap();
    let witness = serve_witness(listener, &skey, app.state.tlog.vkey(), &dir.path().join("state.json")).await;
    let mut outcome = Vec::new();
    for _ in 0..60 {
        outcome = round(&app).await;
        if outcome != vec![None] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(matches!(&outcome[..], [Some(Outcome::Cosigned { .. })]), "{outcome:?}");
    assert_eq!(unanswered(&app, name).await, 0.0);
    assert_eq!(witness.tree(app.state.tlog.origin()).await.map(|t| t.size), Some(2));
}

#[tokio::test]
async fn a_forged_history_signed_with_the_log_key_is_refused_and_counted() {
    let Setup { app, witness, url, dir: _dir, .. } = setup("witness.test/forged").await;
    let origin = app.state.tlog.origin().to_string();
    reserve(&app, 3).await;
    app.state.tlog.catch_up().await.unwrap();
    let first = round(&app).await;
    assert!(matches!(&first[..], [Some(Outcome::Cosigned { .. })]), "{first:?}");
    let cosigned = witness.tree(&origin).await.unwrap();
    assert_eq!(cosigned.size, 3);
    let refused_before = refusals(&app, "witness.test/forged").await;

    // three more entries in the tree, and a checkpoint of it with another root: another history, the log's own key
    reserve(&app, 3).await;
    while app.state.tlog.integrate(1000).await.unwrap() > 0 {}
    let forged = app.state.tlog.sign(6, TreeHash([7; 32])).unwrap();
    sqlx::query("INSERT INTO log_checkpoints (size, note, created_at) VALUES (?, ?, ?)")
        .bind(6i64)
        .bind(&forged)
        .bind(0i64)
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let outcome = round(&app).await;
    assert!(matches!(&outcome[..], [Some(Outcome::Refused { status: 422, .. })]), "{outcome:?}");
    assert_eq!(witness.tree(&origin).await, Some(cosigned.clone()), "the witness's state did not move");
    assert_eq!(refusals(&app, "witness.test/forged").await, refused_before + 1.0);
    // settled: not offered again, not counted twice
    assert_eq!(round(&app).await, vec![None]);
    assert_eq!(refusals(&app, "witness.test/forged").await, refused_before + 1.0);
    // the forged checkpoint is served without a cosignature
    let served = app.state.tlog.checkpoint().await.unwrap().unwrap();
    assert!(!served.contains("witness.test/forged"), "{served}");

    // the same size as the cosigned tree with another root: refused too (422), even with the right old size
    let same_size = app.state.tlog.sign(3, TreeHash([8; 32])).unwrap();
    let (s, _, body) = post(&url, request(3, &[], &same_size)).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // a real checkpoint of 6 with a proof from 3, but a proof hash changed
    let root6 = app.state.tlog.root_at(6).await.unwrap().unwrap();
    let real6 = app.state.tlog.sign(6, root6).unwrap();
    let mut proof = app.state.tlog.consistency(6, 3).await.unwrap().unwrap();
    proof[0].0[0] ^= 1;
    let (s, _, body) = post(&url, request(3, &proof, &real6)).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(witness.tree(&origin).await, Some(cosigned));
    // the true history still goes through
    let proof = app.state.tlog.consistency(6, 3).await.unwrap().unwrap();
    let (s, _, line) = post(&url, request(3, &proof, &real6)).await;
    assert_eq!(s, StatusCode::OK, "{line}");
    assert!(line.starts_with("— witness.test/forged ") && line.ends_with('\n'), "{line}");
    assert_eq!(witness.tree(&origin).await.unwrap().size, 6);
}

#[tokio::test]
async fn the_witness_answers_each_bad_request_with_the_protocol_status_and_keeps_its_state_across_a_restart() {
    let Setup { app, witness, url, skey, dir, .. } = setup("witness.test/strict").await;
    let origin = app.state.tlog.origin().to_string();
    let log = app.state.tlog.clone();
    reserve(&app, 5).await;
    log.catch_up().await.unwrap();
    let root5 = log.root_at(5).await.unwrap().unwrap();
    let note5 = log.sign(5, root5).unwrap();

    // a checkpoint of the log's origin signed by another key: 403
    let (other_skey, _) = docnum::server::tlog::generate_key(&origin);
    let mut other = signed_note::Note::new(&tlog_tiles::Checkpoint::new(&origin, 5, root5, "").unwrap().to_bytes(), &[]).unwrap();
    other.add_sigs(&[&signed_note::StandardSigner::new(&other_skey).unwrap()]).unwrap();
    let (s, _, body) = post(&url, request(0, &[], &String::from_utf8(other.to_bytes()).unwrap())).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("กุญแจ"), "{body}");
    // a log it does not witness: 404
    let (stranger_skey, _) = docnum::server::tlog::generate_key("numbers.stranger.example/log");
    let mut stranger =
        signed_note::Note::new(&tlog_tiles::Checkpoint::new("numbers.stranger.example/log", 5, root5, "").unwrap().to_bytes(), &[]).unwrap();
    stranger.add_sigs(&[&signed_note::StandardSigner::new(&stranger_skey).unwrap()]).unwrap();
    let (s, _, _) = post(&url, request(0, &[], &String::from_utf8(stranger.to_bytes()).unwrap())).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // malformed: 400
    for bad in [
        "garbage".to_string(),
        format!("old 01\n\n{note5}"),
        format!("old -1\n\n{note5}"),
        format!("new 0\n\n{note5}"),
        format!("old 0\nnot-base64!\n\n{note5}"),
        format!("old 0\n{}\n\n{note5}", BASE64_STANDARD.encode([1u8; 31])),
        "old 0\n\nnot a note\n".to_string(),
        format!("old 6\n\n{note5}"),
    ] {
        let (s, _, body) = post(&url, bad.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad:?}: {body}");
    }
    assert_eq!(witness.tree(&origin).await, None, "nothing refused moved the state");

    // the first checkpoint: old 0, no proof
    let (s, _, line) = post(&url, request(0, &[], &note5)).await;
    assert_eq!(s, StatusCode::OK, "{line}");
    assert!(line.starts_with("— witness.test/strict "), "{line}");
    // again, from 0: 409 with the size it knows
    let (s, ct, body) = post(&url, request(0, &[], &note5)).await;
    assert_eq!((s, ct.as_str(), body.as_str()), (StatusCode::CONFLICT, "text/x.tlog.size", "5\n"));
    // the same checkpoint from its own size: cosigned again
    let (s, _, _) = post(&url, request(5, &[], &note5)).await;
    assert_eq!(s, StatusCode::OK);

    // the service learns the size from the 409 and proves from it
    reserve(&app, 2).await;
    log.catch_up().await.unwrap();
    let outcome = round(&app).await;
    assert!(matches!(&outcome[..], [Some(Outcome::Cosigned { .. })]), "{outcome:?}");
    assert_eq!(witness.tree(&origin).await.unwrap().size, 7);

    // restarted on another port from its file: it remembers 7 and refuses to go back to 5
    let state = witness.tree(&origin).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url2 = format!("http://{}", listener.local_addr().unwrap());
    let restarted = serve_witness(listener, &skey, log.vkey(), &dir.path().join("state.json")).await;
    assert_eq!(restarted.tree(&origin).await, Some(state));
    let (s, ct, body) = post(&url2, request(0, &[], &note5)).await;
    assert_eq!((s, ct.as_str(), body.as_str()), (StatusCode::CONFLICT, "text/x.tlog.size", "7\n"));
    let (s, _, _) = post(&url2, request(7, &[], &note5)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "old larger than the checkpoint");
    assert_eq!(restarted.tree(&origin).await.unwrap().size, 7);
}

/// A `docnum witness` process, killed when dropped.
struct WitnessProcess {
    child: std::process::Child,
    url: String,
    vkey: String,
}

impl WitnessProcess {
    /// Makes its key with `docnum witness-keygen` and starts it for the log of `log_vkey`, its files in `dir`.
    fn start(dir: &std::path::Path, name: &str, log_vkey: &str) -> WitnessProcess {
        let bin = env!("CARGO_BIN_EXE_docnum");
        let key_file = dir.join("witness.key");
        let out = std::process::Command::new(bin).args(["witness-keygen", "--name", name]).arg(&key_file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let vkey = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let port = crate::support::free_port();
        let child = std::process::Command::new(bin)
            .arg("witness")
            .arg("--addr")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--key-file")
            .arg(&key_file)
            .arg("--state-file")
            .arg(dir.join("state.json"))
            .arg("--log")
            .arg(log_vkey)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        WitnessProcess { child, url: format!("http://127.0.0.1:{port}"), vkey }
    }
}

impl Drop for WitnessProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn the_witness_binary_runs_with_its_own_key_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let (log_skey, log_vkey) = docnum::server::tlog::generate_key("numbers.binary.example/log");
    let w = WitnessProcess::start(dir.path(), "witness.test/binary", &log_vkey);
    assert!(w.vkey.starts_with("witness.test/binary+"), "{}", w.vkey);
    let mut note =
        signed_note::Note::new(&tlog_tiles::Checkpoint::new("numbers.binary.example/log", 0, tlog_tiles::EMPTY_HASH, "").unwrap().to_bytes(), &[])
            .unwrap();
    note.add_sigs(&[&signed_note::StandardSigner::new(&log_skey).unwrap()]).unwrap();
    let note = String::from_utf8(note.to_bytes()).unwrap();
    let mut answer = None;
    for _ in 0..100 {
        if let Ok(r) = reqwest::Client::new().post(format!("{}/add-checkpoint", w.url)).body(request(0, &[], &note)).send().await {
            answer = Some((r.status(), r.text().await.unwrap()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, line) = answer.expect("the witness answered");
    assert_eq!(status, StatusCode::OK, "{line}");
    let v = receipt::cosignature::CosignatureVerifier::new(&w.vkey).unwrap();
    let body = signed_note::Note::from_bytes(note.as_bytes()).unwrap().text().to_vec();
    assert!(matches!(v.check_line(&body, &line), Some(Some(_))), "{line}");
    let state: Value = serde_json::from_slice(&std::fs::read(dir.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(state["numbers.binary.example/log"]["size"], 0);
}

/// The served binaries end to end: `docnum serve` with LOG_WITNESSES set gets its checkpoints cosigned by a
/// `docnum witness` process, in the background, and serves them cosigned.
#[tokio::test]
async fn a_served_log_is_cosigned_by_a_witness_process() {
    let dir = tempfile::tempdir().unwrap();
    let origin = "numbers.served.example/log";
    let (log_skey, log_vkey) = docnum::server::tlog::generate_key(origin);
    let key_file = dir.path().join("log.key");
    std::fs::write(&key_file, format!("{log_skey}\n")).unwrap();
    let w = WitnessProcess::start(dir.path(), "witness.test/served", &log_vkey);
    let db_url = format!("sqlite://{}", dir.path().join("served.db").display());
    let server = crate::support::DocnumServer::start(
        &db_url,
        &[
            ("LOG_ORIGIN", origin.to_string()),
            ("LOG_SIGNING_KEY_FILE", key_file.display().to_string()),
            ("LOG_WITNESSES", format!("{} {}", w.vkey, w.url)),
            ("LOG_WITNESS_TIMEOUT_MS", "2000".to_string()),
        ],
    );
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    server.wait_healthy(&client).await;
    let mut served = String::new();
    for _ in 0..300 {
        if let Ok(r) = client.get(format!("{}/log/checkpoint", server.base)).send().await {
            served = r.text().await.unwrap();
            if served.contains("\n— witness.test/served ") {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = receipt::verify_checkpoint_witnessed(&served, &log_vkey, &[&w.vkey]).expect("the served checkpoint verifies");
    assert!(matches!(v.witnesses[0].cosigned, Cosigned::At(_)), "{served}");
    let state: Value = serde_json::from_slice(&std::fs::read(dir.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(state[origin]["size"].as_u64(), Some(v.size));
}
