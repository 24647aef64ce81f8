//! The numbers' transparency log: every numbering event an entry, in the order committed; its proofs checked by an
//! independent RFC 6962 implementation (`ct-merkle`); a receipt that verifies with nothing but itself and `/log/key`,
//! and is refused once a byte of it changed or against another key; checkpoints consistent between every pair.

use ct_merkle::mem_backed_tree::MemoryBackedTree;
use ct_merkle::{ConsistencyProof, InclusionProof, RootHash};
use docnum::receipt::{self, Refusal, TreeHash};
use docnum::server::tlog::{document_sha256, generate_key};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2_011::Sha256;

use crate::common::*;

type Tree = MemoryBackedTree<Sha256, Vec<u8>>;

fn root_of(tree_root: &TreeHash, size: u64) -> RootHash<Sha256> {
    RootHash::new(tree_root.0.into(), size)
}

fn digests(proof: &[TreeHash]) -> Vec<u8> {
    proof.iter().flat_map(|h| h.0).collect()
}

/// `n` reservations, 16 at a time; their numbers.
async fn reserve_many(app: &TestApp, n: usize) -> Vec<String> {
    let mut numbers = Vec::with_capacity(n);
    let body = letter();
    for chunk in (0..n).collect::<Vec<_>>().chunks(16) {
        let answers = join_all(chunk.iter().map(|_| app.reserve(&body))).await;
        for (s, r) in answers {
            assert_eq!(s, StatusCode::OK, "{r}");
            numbers.push(r["documentNumber"].as_str().unwrap().to_string());
        }
    }
    numbers
}

async fn public_text(app: &TestApp, path: &str) -> (StatusCode, String, String) {
    let r = reqwest::Client::new().get(app.url(path)).send().await.unwrap();
    let cache = r.headers().get("cache-control").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (r.status(), cache, r.text().await.unwrap())
}

/// Every entry, read back through the public entry tiles, as the tree's leaves.
async fn leaves_from_tiles(app: &TestApp, size: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for n in 0..size.div_ceil(256) {
        let width = (size - n * 256).min(256) as u32;
        let path = format!("/log/tile/entries/{}", receipt::tile_index_path(n, width));
        let r = reqwest::Client::new().get(app.url(&path)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.headers()["cache-control"], "public, max-age=31536000, immutable");
        let bytes = r.bytes().await.unwrap();
        let mut at = 0;
        while at < bytes.len() {
            let len = u16::from_be_bytes([bytes[at], bytes[at + 1]]) as usize;
            out.push(bytes[at + 2..at + 2 + len].to_vec());
            at += 2 + len;
        }
    }
    assert_eq!(out.len() as u64, size);
    out
}

/// The first `size` entries, read back through the public entry tiles.
async fn entries_of(app: &TestApp, size: u64) -> Vec<receipt::Entry> {
    leaves_from_tiles(app, size).await.iter().map(|text| receipt::Entry::parse(std::str::from_utf8(text).unwrap()).unwrap()).collect()
}

#[tokio::test]
async fn a_receipt_verifies_with_nothing_but_itself_and_the_log_key() {
    let app = TestApp::spawn().await;
    let (s, r) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let number = r["documentNumber"].as_str().unwrap().to_string();
    let (s, c) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": r["token"], "documentId": "DOC-SECRET-77" })).await;
    assert_eq!(s, StatusCode::OK, "{c}");

    // public: no token, no session
    let query = format!(
        "/api/v1/document-numbering/receipts?projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber={}&event=confirmed",
        urlencode(&number)
    );
    let (s, _, text) = public_text(&app, &query).await;
    assert_eq!(s, StatusCode::OK, "{text}");
    assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "), "{text}");
    assert!(!text.contains("DOC-SECRET-77"));
    let (s, _, key) = public_text(&app, "/log/key").await;
    assert_eq!(s, StatusCode::OK);
    assert!(key.starts_with("numbers.docnum.local/log+"), "{key}");

    let checked = receipt::verify(&text, &key).expect("the receipt verifies");
    assert_eq!(checked.entry.number, number);
    assert_eq!(checked.entry.event, "confirmed");
    assert_eq!((checked.entry.project.as_str(), checked.entry.type_code.as_str()), ("LCBP3", "LETTER"));
    assert_eq!(checked.entry.document_sha256.as_deref(), Some(document_sha256("DOC-SECRET-77").as_str()));
    assert!(checked.entry.at.ends_with('Z'));

    // without `event`: the newest entry of the number (confirmed, after reserved)
    let (_, _, newest) = public_text(&app, &query.replace("&event=confirmed", "")).await;
    assert_eq!(receipt::verify(&newest, &key).unwrap().entry.event, "confirmed");
    let (_, _, reserved) = public_text(&app, &query.replace("=confirmed", "=reserved")).await;
    assert_eq!(receipt::verify(&reserved, &key).unwrap().entry.event, "reserved");

    // refusals: a changed entry, a changed proof hash, a changed checkpoint, another key
    let parsed = receipt::Receipt::parse(&text).unwrap();
    let mut changed = parsed.clone();
    changed.entry = String::from_utf8(changed.entry).unwrap().replace("event confirmed", "event cancelled").into_bytes();
    assert_eq!(receipt::verify(&changed.to_text(), &key), Err(Refusal::Proof));
    if !parsed.proof.is_empty() {
        let mut changed = parsed.clone();
        changed.proof[0].0[7] ^= 1;
        assert_eq!(receipt::verify(&changed.to_text(), &key), Err(Refusal::Proof));
    }
    let mut changed = parsed.clone();
    changed.checkpoint = changed.checkpoint.replacen(&format!("\n{}\n", checked.checkpoint.size), &format!("\n{}\n", checked.checkpoint.size + 1), 1);
    assert_eq!(receipt::verify(&changed.to_text(), &key), Err(Refusal::Signature));
    let (_, other_key) = generate_key("numbers.docnum.local/log");
    assert_eq!(receipt::verify(&text, &other_key), Err(Refusal::Signature));
    let (_, other_log) = generate_key("numbers.other.example/log");
    assert_eq!(receipt::verify(&text, &other_log), Err(Refusal::Signature));
    assert_eq!(receipt::verify(&text.replacen("extra ", "extra !", 1), &key), Err(Refusal::Format));

    // the command line: valid, then one changed byte
    let dir = tempfile::tempdir().unwrap();
    let (file, bad) = (dir.path().join("r.tlog-proof"), dir.path().join("bad.tlog-proof"));
    std::fs::write(&file, &text).unwrap();
    let mut flipped = text.clone().into_bytes();
    let last_proof_byte = text.find("\n\n").unwrap() - 2;
    flipped[last_proof_byte] = if flipped[last_proof_byte] == b'A' { b'B' } else { b'A' };
    std::fs::write(&bad, &flipped).unwrap();
    let verify = |f: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_docnum")).arg("verify").arg(f).arg("--key").arg(key.trim()).output().unwrap()
    };
    let ok = verify(&file);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let report: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!((report["valid"].as_bool(), report["number"].as_str()), (Some(true), Some(number.as_str())));
    let refused = verify(&bad);
    assert_eq!(refused.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(report["valid"], false);

    // a number with no entry, an event the log does not know
    let (s, _, _) = public_text(&app, &query.replace(&urlencode(&number), "NOPE-1")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _, body) = public_text(&app, &query.replace("=confirmed", "=minted")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn proofs_agree_with_ct_merkle_at_random_sizes() {
    let app = TestApp::spawn().await;
    let log = app.state.tlog.clone();
    reserve_many(&app, 300).await;
    let size = log.catch_up().await.unwrap();
    assert_eq!(size, 300);
    let leaves = leaves_from_tiles(&app, size).await;

    let mut tree = Tree::new();
    let mut roots = Vec::new();
    for leaf in &leaves {
        tree.push(leaf.clone());
        roots.push(tree.root());
    }
    // the level-0 hash tiles are the leaves' hashes
    let (s, _, _) = public_text(&app, "/log/tile/0/001.p/44").await;
    assert_eq!(s, StatusCode::OK);
    let tile = reqwest::get(app.url("/log/tile/0/000")).await.unwrap().bytes().await.unwrap();
    assert_eq!(&tile[..32], tlog_tiles::record_hash(&leaves[0]).0);
    let (s, _, _) = public_text(&app, "/log/tile/0/001").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "a full tile past the tree");

    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    for _ in 0..60 {
        let at = 1 + next(size);
        let ours = log.root_at(at).await.unwrap().unwrap();
        let theirs = &roots[at as usize - 1];
        assert_eq!(ours.0.as_slice(), theirs.as_bytes().as_slice(), "root of {at}");
        let index = next(at);
        let proof = log.inclusion(at, index).await.unwrap().unwrap();
        let proof = InclusionProof::<Sha256>::try_from_bytes(digests(&proof)).unwrap();
        theirs.verify_inclusion(&leaves[index as usize], index, &proof).unwrap_or_else(|e| panic!("{index} in {at}: {e:?}"));
        let old = 1 + next(at);
        let consistency = log.consistency(at, old).await.unwrap().unwrap();
        let c = ConsistencyProof::<Sha256>::try_from_bytes(digests(&consistency)).unwrap();
        theirs.verify_consistency(&roots[old as usize - 1], &c).unwrap_or_else(|e| panic!("{old} to {at}: {e:?}"));
        assert_eq!(root_of(&ours, at).as_bytes(), theirs.as_bytes());
    }
    // nothing staged is left behind, and each event is in once
    assert_eq!(app.count("SELECT COUNT(*) FROM log_staged").await, 0);
    let entries = entries_of(&app, 300).await;
    let reserved: std::collections::HashSet<&str> = entries.iter().filter(|e| e.event == "reserved").map(|e| e.number.as_str()).collect();
    assert_eq!(reserved.len(), 300);
    // one run of the counter for each batch the sequencer took, not a row for each event
    assert!(app.count("SELECT COUNT(*) FROM log_runs").await < 300);
    assert_eq!(app.count("SELECT COUNT(*) FROM log_bundles").await, 2);
}

#[tokio::test]
async fn a_thousand_appends_are_consistent_between_every_pair_of_checkpoints() {
    let app = TestApp::spawn().await;
    let log = app.state.tlog.clone();
    let (_, _, key) = public_text(&app, "/log/key").await;
    let mut done = 0;
    for step in [1usize, 2, 5, 13, 31, 64, 100, 7, 250, 27, 300, 200] {
        reserve_many(&app, step).await;
        done += step;
        assert_eq!(log.catch_up().await.unwrap(), done as u64);
    }
    assert_eq!(done, 1000);
    let checkpoints = log.checkpoints().await.unwrap();
    assert_eq!(checkpoints.len(), 12);
    let verified: Vec<receipt::Verified> = checkpoints.iter().map(|(_, note)| receipt::verify_checkpoint(note, &key).unwrap()).collect();
    let (s, cache, latest) = public_text(&app, "/log/checkpoint").await;
    assert_eq!((s, cache.as_str()), (StatusCode::OK, "no-cache"));
    assert_eq!(receipt::verify_checkpoint(&latest, &key).unwrap().size, 1000);
    let mut pairs = 0;
    for (i, old) in verified.iter().enumerate() {
        for new in &verified[i + 1..] {
            let proof = log.consistency(new.size, old.size).await.unwrap().unwrap();
            receipt::check_consistency(&proof, new.size, new.root, old.size, old.root).unwrap();
            let c = ConsistencyProof::<Sha256>::try_from_bytes(digests(&proof)).unwrap();
            root_of(&new.root, new.size).verify_consistency(&root_of(&old.root, old.size), &c).unwrap();
            // a root the log never had is refused
            let mut forged = old.root;
            forged.0[0] ^= 1;
            assert_eq!(receipt::check_consistency(&proof, new.size, new.root, old.size, forged), Err(Refusal::Inconsistent));
            pairs += 1;
        }
    }
    assert_eq!(pairs, 66);
}

#[tokio::test]
async fn check_finds_each_event_logged_once_and_a_changed_log() {
    use docnum::server::numbering::check;
    let app = TestApp::spawn().await;
    let (s, kept) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = app.post_json("/api/v1/document-numbering/confirm", &json!({ "token": kept["token"], "documentId": "D-1" })).await;
    assert_eq!(s, StatusCode::OK);
    let (_, dropped) = app.reserve(&letter()).await;
    let (s, _) = app.post_json("/api/v1/document-numbering/cancel", &json!({ "token": dropped["token"], "reason": "not sent" })).await;
    assert_eq!(s, StatusCode::OK);
    let (_, lapsed) = app.reserve(&letter()).await;
    app.clock.advance(chrono::Duration::seconds(301));
    assert_eq!(app.state.engine().expire_due().await.unwrap(), 1);

    // committed but not sequenced yet: staged, not missing
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!((report.transparency_log.missing, report.transparency_log.extra), (0, 0));
    assert_eq!((report.transparency_log.entries, report.transparency_log.pending), (0, 6));

    app.state.tlog.catch_up().await.unwrap();
    reserve_many(&app, 5).await;
    app.state.tlog.catch_up().await.unwrap();
    let report = check::check(&app.state.db, &[]).await.unwrap();
    let log = &report.transparency_log;
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!((log.entries, log.pending, log.missing, log.extra, log.checkpoints, log.checkpoints_consistent), (11, 0, 0, 0, 2, true));
    let events: Vec<(String, String)> = entries_of(&app, 11).await.into_iter().take(6).map(|e| (e.number, e.event)).collect();
    let number = |v: &Value| v["documentNumber"].as_str().unwrap().to_string();
    assert_eq!(
        events,
        vec![
            (number(&kept), "reserved".to_string()),
            (number(&kept), "confirmed".into()),
            (number(&dropped), "reserved".into()),
            (number(&dropped), "cancelled".into()),
            (number(&lapsed), "reserved".into()),
            (number(&lapsed), "expired".into()),
        ]
    );

    // entries in no run: each counted as extra, and its audit row's event as missing
    let pool = &app.state.db.pool;
    let runs: Vec<(i64, i64, i64, i64, Vec<u8>)> =
        sqlx::query_as("SELECT counter_id, first_chain, last_chain, first_idx, chain FROM log_runs").fetch_all(pool).await.unwrap();
    sqlx::query("DELETE FROM log_runs").execute(pool).await.unwrap();
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert!(!report.ok);
    assert_eq!((report.transparency_log.missing, report.transparency_log.extra), (11, 11));
    assert!(report.problems.iter().any(|p| p.contains("entry 0 is in no run")), "{:?}", report.problems);
    for (counter, first, last, idx, chain) in runs {
        sqlx::query("INSERT INTO log_runs (counter_id, first_chain, last_chain, first_idx, chain) VALUES (?, ?, ?, ?, ?)")
            .bind(counter)
            .bind(first)
            .bind(last)
            .bind(idx)
            .bind(chain)
            .execute(pool)
            .await
            .unwrap();
    }
    assert!(check::check(&app.state.db, &[]).await.unwrap().ok);

    // an event logged that no audit row explains, and an entry's text changed
    let staged = br#"[{"event":"confirmed","number":"X-1","counter":1,"sequence":99,"document":null,"at":0}]"#.to_vec();
    sqlx::query("INSERT INTO log_staged (events) VALUES (?)").bind(staged).execute(&app.state.db.pool).await.unwrap();
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert!(!report.ok);
    assert_eq!((report.transparency_log.missing, report.transparency_log.extra), (0, 1));
    sqlx::query("DELETE FROM log_staged").execute(&app.state.db.pool).await.unwrap();
    // (entry 3, the one cancelled: the same length, so the bundle still reads)
    let mut forged: Vec<u8> = sqlx::query_scalar("SELECT entries FROM log_bundles WHERE bundle = 0").fetch_one(&app.state.db.pool).await.unwrap();
    let at = forged.windows(15).position(|w| w == b"event cancelled").unwrap();
    forged[at..at + 15].copy_from_slice(b"event confirmed");
    sqlx::query("UPDATE log_bundles SET entries = ? WHERE bundle = 0").bind(forged).execute(&app.state.db.pool).await.unwrap();
    let report = check::check(&app.state.db, &[]).await.unwrap();
    let log = &report.transparency_log;
    assert!(!report.ok);
    assert_eq!((log.missing, log.extra, log.checkpoints_consistent), (1, 1, false));
    assert!(report.problems.iter().any(|p| p.contains("the stored root is not the root of the entries")), "{:?}", report.problems);
}

#[tokio::test]
async fn a_number_has_a_qr_code_and_a_stamp_of_its_verify_link() {
    let app = TestApp::spawn().await;
    let (s, r) = app.reserve(&letter()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let number = r["documentNumber"].as_str().unwrap().to_string();
    let coords = format!("projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber={}", urlencode(&number));
    let get = |path: String| {
        let url = app.url(&path);
        async move {
            // public, like the receipt: no token, no session
            let r = reqwest::Client::new().get(url).send().await.unwrap();
            let ct = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
            (r.status(), ct, r.text().await.unwrap())
        }
    };

    let (s, ct, qr) = get(format!("/api/v1/document-numbering/receipts/qr?{coords}")).await;
    assert_eq!(s, StatusCode::OK, "{qr}");
    assert_eq!(ct, "image/svg+xml; charset=utf-8");
    assert!(qr.contains("<svg") && qr.contains("<path"), "{qr}");
    let (_, _, receipt_text) = get(format!("/api/v1/document-numbering/receipts?{coords}")).await;
    let modules: u32 = qr.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    eprintln!("receipt {} bytes; verify link by coordinates; QR {} modules a side with its quiet zone", receipt_text.len(), modules);
    // a receipt does not fit a QR code fit for paper: the link names the number instead
    assert!(receipt::link::verify_link("http://127.0.0.1:1", &receipt_text, "LCBP3", "LETTER", &number).contains("documentNumber="));

    let (s, ct, stamp) = get(format!("/api/v1/document-numbering/receipts/stamp?{coords}")).await;
    assert_eq!(s, StatusCode::OK, "{stamp}");
    assert_eq!(ct, "image/svg+xml; charset=utf-8");
    assert!(stamp.contains(&number), "{stamp}");
    assert!(stamp.contains("โครงการ LCBP3 · ประเภท LETTER"), "{stamp}");
    assert!(stamp.contains("บันทึกความโปร่งใส numbers.docnum.local/log"), "{stamp}");
    assert!(stamp.contains("ตรวจสอบได้ที่ http://127.0.0.1:") && stamp.contains("/verify</text>"), "{stamp}");

    // a number with no entry: 404 in Thai; bad input: 400 in Thai
    for what in ["qr", "stamp"] {
        let (s, ct, body) = get(format!("/api/v1/document-numbering/receipts/{what}?{}", coords.replace(&urlencode(&number), "NOPE-1"))).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
        assert!(ct.starts_with("application/json"), "{ct}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert!(body["message"].as_str().unwrap().contains("NOPE-1"), "{body}");
        assert!(body["message"].as_str().unwrap().chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c)), "Thai: {body}");
        let (s, _, body) = get(format!("/api/v1/document-numbering/receipts/{what}?{coords}&event=minted")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
        let (s, _, body) =
            get(format!("/api/v1/document-numbering/receipts/{what}?projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber=")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("documentNumber ต้องยาว"), "{body}");
        // blanks are no number: refused as input, as the verify link refuses them, not looked for
        let (s, _, body) =
            get(format!("/api/v1/document-numbering/receipts/{what}?projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber=%20%20")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("documentNumber ต้องยาว"), "{body}");
        // the length is the value's as sent, as the OpenAPI document states it: blanks around it count
        let padded = format!("%20{}", "9".repeat(255));
        let (s, _, body) =
            get(format!("/api/v1/document-numbering/receipts/{what}?projectCode=LCBP3&correspondenceTypeCode=LETTER&documentNumber={padded}")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("documentNumber ต้องยาว 1–255"), "{body}");
        let (s, _, body) = get(format!("/api/v1/document-numbering/receipts/{what}?projectCode=LCBP3")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    }
}

/// The stored hashes, page after page, as one run of bytes.
async fn stored_hashes(app: &TestApp) -> Vec<u8> {
    let pages: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT page, hashes FROM log_hash_pages ORDER BY page").fetch_all(&app.state.db.pool).await.unwrap();
    assert!(pages.iter().enumerate().all(|(i, (page, _))| *page == i as i64), "pages numbered from 0 without a hole");
    pages.into_iter().flat_map(|(_, bytes)| bytes).collect()
}

#[tokio::test]
async fn hashes_stored_one_per_row_move_into_pages_and_a_changed_page_is_found() {
    use docnum::server::numbering::check;
    let app = TestApp::spawn().await;
    reserve_many(&app, 700).await;
    app.state.tlog.catch_up().await.unwrap();
    let paged = stored_hashes(&app).await;
    assert_eq!(paged.len() as u64, tlog_tiles::stored_hash_count(700) * 32);
    assert_eq!(app.count("SELECT COUNT(*) FROM log_hash_pages").await, tlog_tiles::stored_hash_count(700).div_ceil(256) as i64);

    // as an earlier version stored them: one row per hash
    let pool = &app.state.db.pool;
    for (id, hash) in paged.chunks(32).enumerate() {
        sqlx::query("INSERT INTO log_hashes (id, hash) VALUES (?, ?)").bind(id as i64).bind(hash.to_vec()).execute(pool).await.unwrap();
    }
    sqlx::query("DELETE FROM log_hash_pages").execute(pool).await.unwrap();
    app.state.tlog.page_loose_hashes().await.unwrap();
    assert_eq!(app.count("SELECT COUNT(*) FROM log_hashes").await, 0);
    assert_eq!(stored_hashes(&app).await, paged);
    app.state.tlog.page_loose_hashes().await.unwrap();
    assert_eq!(stored_hashes(&app).await, paged, "moving them again changes nothing");

    // the log grows from the last, partly filled page on
    reserve_many(&app, 3).await;
    app.state.tlog.catch_up().await.unwrap();
    assert_eq!(stored_hashes(&app).await.len() as u64, tlog_tiles::stored_hash_count(703) * 32);
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.transparency_log.entries, 703);

    // one changed byte in a page is found, and named
    let (page, mut bytes): (i64, Vec<u8>) = sqlx::query_as("SELECT page, hashes FROM log_hash_pages WHERE page = 1").fetch_one(pool).await.unwrap();
    bytes[100] ^= 1;
    sqlx::query("UPDATE log_hash_pages SET hashes = ? WHERE page = ?").bind(bytes).bind(page).execute(pool).await.unwrap();
    let report = check::check(&app.state.db, &[]).await.unwrap();
    assert!(!report.ok);
    assert!(report.problems.iter().any(|p| p.contains("hash page 1 differs")), "{:?}", report.problems);
}
