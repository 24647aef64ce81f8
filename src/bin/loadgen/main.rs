//! Load generator: drives `reserve` over HTTP at a chosen concurrency, reports numbers/s and latency
//! percentiles, then checks every number it received: no duplicate, and per counter the sequences
//! form one contiguous run.
//!
//!   loadgen --embedded --concurrency 64 --requests 20000           # starts the service in-process on a temp SQLite file
//!   loadgen --url http://127.0.0.1:3000 --token dnt_… -c 64 -n 20000  # against a running service
//!
//! With `--rate` it runs the open model instead (open.rs): a fixed arrival rate of the requirements' mix for `--duration`
//! seconds, a line per minute (the soak, scripts/soak.sh):
//!
//!   loadgen --url http://127.0.0.1:3000,http://127.0.0.1:3001 --token dnt_… --login admin:… --rate 500 --duration 1800
// the Leptos view types are deep; release builds monomorphize them in the binary too
#![recursion_limit = "512"]

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Deserialize;
use serde_json::{json, Value};

mod http1;
mod open;

const RESERVE: &str = "/api/v1/document-numbering/reserve";

/// The fields of a reserve answer that the check needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reserved {
    token: Option<String>,
    sequence: i64,
    document_number: String,
}

#[derive(Parser, Debug)]
#[command(name = "loadgen", about = "Drive reserve requests and check every number")]
struct Args {
    /// Base URL of a running service; several, comma-separated, are used in turn (one instance each).
    #[arg(long, value_delimiter = ',')]
    url: Vec<String>,
    /// API token of that service (`docnum create-token --name loadgen`).
    #[arg(long, env = "LOADGEN_TOKEN")]
    token: Option<String>,
    /// Start the service in this process on a fresh SQLite file (demo data, limits off).
    #[arg(long)]
    embedded: bool,
    /// Concurrent callers.
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    /// Total requests.
    #[arg(short = 'n', long, default_value_t = 10_000)]
    requests: usize,
    /// Spread requests over this many counters (1 = one hot counter). At most 25 per project and type pair.
    #[arg(long, default_value_t = 1)]
    counters: usize,
    /// Index of the first counter used (so that concurrent runs can use disjoint counters).
    #[arg(long, default_value_t = 0)]
    first_counter: usize,
    /// Give up after this many seconds whatever the count.
    #[arg(long, default_value_t = 300)]
    max_seconds: u64,
    /// Print the summary as one JSON line too.
    #[arg(long)]
    json: bool,
    /// Confirm this share of the reserved numbers (0.0–1.0) with a document id.
    #[arg(long, default_value_t = 0.0)]
    confirm_ratio: f64,
    /// Cancel this share of the reserved numbers (0.0–1.0).
    #[arg(long, default_value_t = 0.0)]
    cancel_ratio: f64,
    /// Write every number received (number, sequence, final status, when it was received in Unix ms) to this file, one
    /// per line.
    #[arg(long)]
    record: Option<std::path::PathBuf>,
    /// Fault runs: failed requests are expected; only duplicates fail the run.
    #[arg(long)]
    allow_errors: bool,
    /// Measure the HTTP path alone, with a token scoped to another project than LCBP3 (`create-token --project
    /// LCBP3-C4`): every request asks a number in LCBP3, which the service authenticates, parses and resolves,
    /// then refuses with 403 — no counter, no database read or write. The 403s are the run's answers; nothing is
    /// checked. The ceiling that the reserve rows are compared with.
    #[arg(long)]
    ceiling: bool,

    // --- the open model (open.rs); the closed model's --concurrency, --requests, --counters, --first-counter,
    // --max-seconds and --ceiling do not apply to it; --confirm-ratio, --cancel-ratio, --record, --allow-errors do
    /// Open model: this many arrivals per second, each sent when due whatever the answers before it.
    #[arg(long)]
    rate: Option<f64>,
    /// Open model: how long arrivals come, in seconds.
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Open model: seconds per printed line (and report row).
    #[arg(long, default_value_t = 60)]
    interval: u64,
    /// Open model: most requests out at once; an arrival past it is dropped and counted as an error.
    #[arg(long, default_value_t = 4096)]
    max_in_flight: usize,
    /// Open model: a request unanswered after this many seconds counts as an error (`timeout`).
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
    /// Open model: share of arrivals that are previews (the rest, after pages, are reserves).
    #[arg(long, default_value_t = 0.10)]
    preview_share: f64,
    /// Open model: share of arrivals that load a page (`/`, `/templates`, `/counters`) with the session of --login.
    #[arg(long, default_value_t = 0.06)]
    page_share: f64,
    /// Open model: share of arrivals that start a page load and hang up mid-answer (half of them with the session).
    #[arg(long, default_value_t = 0.04)]
    abandon_share: f64,
    /// Open model: `USER:PASSWORD` to log in with on each instance, for the page loads' session cookie.
    #[arg(long, env = "LOADGEN_LOGIN")]
    login: Option<String>,
    /// Open model: write the per-interval table and totals here, as JSON (or Markdown if the name ends in `.md`).
    #[arg(long)]
    report: Option<std::path::PathBuf>,
}

const ORGS: [&str; 5] = ["กทท.", "สคฉ.3", "คคง.", "ผรม.1", "ผรม.2"];
const PROJECTS: [&str; 5] = ["LCBP3", "LCBP3-C1", "LCBP3-C2", "LCBP3-C3", "LCBP3-C4"];
const TYPES: [&str; 8] = ["LETTER", "MEMO", "RFI", "EMAIL", "MOM", "INSTRUCTION", "NOTICE", "OTHER"];

/// The request body of counter `i`: distinct (project, type, originator, recipient) per index.
fn request_for(i: usize) -> Value {
    let pair = i % 25;
    let rest = i / 25;
    json!({
        "projectCode": PROJECTS[rest % PROJECTS.len()],
        "correspondenceTypeCode": TYPES[(rest / PROJECTS.len()) % TYPES.len()],
        "originatorCode": ORGS[pair / 5],
        "recipientCode": ORGS[pair % 5],
    })
}

struct Sample {
    counter: usize,
    sequence: i64,
    number: String,
    micros: u64,
    /// When the request was sent, in ms from the start of the run (to place a stall).
    sent_at_ms: f64,
    status: &'static str,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if std::env::var("RUST_LOG").is_ok() {
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_writer(std::io::stderr).init();
    }
    let max_counters = PROJECTS.len() * TYPES.len() * 25;
    if args.counters == 0 || args.first_counter + args.counters > max_counters {
        eprintln!("--counters must be 1..={max_counters}");
        std::process::exit(2);
    }
    let _dir;
    let (base, token) = if args.embedded {
        let dir = tempfile_dir();
        let (base, token) = start_embedded(&dir).await;
        _dir = Some(dir);
        (base, token)
    } else {
        _dir = None;
        match (args.url.is_empty(), &args.token) {
            (false, Some(t)) => (String::new(), t.clone()),
            _ => {
                eprintln!("give --url and --token, or --embedded");
                std::process::exit(2);
            }
        }
    };

    let bases: Arc<Vec<String>> =
        Arc::new(if args.url.is_empty() { vec![base] } else { args.url.iter().map(|u| u.trim_end_matches('/').to_string()).collect() });
    if let Some(rate) = args.rate {
        // the embedded service's admin logs in with the password it was started with
        let login = args.login.clone().or_else(|| args.embedded.then(|| format!("admin:{EMBEDDED_ADMIN_PASSWORD}")));
        let login = login.map(|l| match l.split_once(':') {
            Some((user, password)) => (user.to_string(), password.to_string()),
            None => (l, String::new()),
        });
        std::process::exit(open::run(&args, rate, bases.to_vec(), token, login).await);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let bodies: Arc<Vec<Vec<u8>>> =
        Arc::new((args.first_counter..args.first_counter + args.counters).map(|i| request_for(i).to_string().into_bytes()).collect());
    let ceiling = args.ceiling;
    let started = Instant::now();
    let started_unix_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let (bases, token, next, bodies) = (bases.clone(), token.clone(), next.clone(), bodies.clone());
            let total = args.requests;
            let (confirm_ratio, cancel_ratio) = (args.confirm_ratio, args.cancel_ratio);
            tokio::spawn(async move {
                // one keep-alive connection per server for this caller
                let mut conns: Vec<http1::Conn> = bases.iter().map(|b| http1::Conn::new(b)).collect();
                let mut samples = Vec::new();
                let mut errors: BTreeMap<String, usize> = BTreeMap::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total || Instant::now() > deadline {
                        break;
                    }
                    let counter = i % bodies.len();
                    let conn = &mut conns[i % bases.len()];
                    let t0 = Instant::now();
                    let result = conn.post_json(RESERVE, &token, &bodies[counter]).await;
                    let micros = t0.elapsed().as_micros() as u64;
                    if ceiling {
                        match result {
                            Ok(r) if r.status == 403 => samples.push(Sample {
                                counter,
                                sequence: i as i64,
                                number: String::new(),
                                micros,
                                sent_at_ms: (t0 - started).as_secs_f64() * 1000.0,
                                status: "FORBIDDEN",
                            }),
                            Ok(r) => *errors.entry(format!("HTTP {}", r.status)).or_default() += 1,
                            Err(e) => *errors.entry(format!("transport: {}", e.kind())).or_default() += 1,
                        }
                        continue;
                    }
                    match result {
                        Ok(r) if (200..300).contains(&r.status) => match serde_json::from_slice::<Reserved>(&r.body) {
                            Ok(v) => {
                                // a deterministic share of the reservations is confirmed or cancelled afterwards
                                let pick = (i as f64 * 0.618_034) % 1.0;
                                let (path, body, status) = if pick < confirm_ratio {
                                    ("confirm", json!({ "token": v.token, "documentId": format!("LOAD-{i}") }), "CONFIRMED")
                                } else if pick < confirm_ratio + cancel_ratio {
                                    ("cancel", json!({ "token": v.token, "reason": "loadgen" }), "CANCELLED")
                                } else {
                                    ("", Value::Null, "RESERVED")
                                };
                                let mut final_status = status;
                                if !path.is_empty() {
                                    let done =
                                        conn.post_json(&format!("/api/v1/document-numbering/{path}"), &token, body.to_string().as_bytes()).await;
                                    if !matches!(&done, Ok(r) if (200..300).contains(&r.status)) {
                                        final_status = "RESERVED";
                                        *errors.entry(format!("{path} failed")).or_default() += 1;
                                    }
                                }
                                samples.push(Sample {
                                    counter,
                                    sequence: v.sequence,
                                    number: v.document_number,
                                    micros,
                                    sent_at_ms: (t0 - started).as_secs_f64() * 1000.0,
                                    status: final_status,
                                })
                            }
                            Err(e) => *errors.entry(format!("bad body: {e}")).or_default() += 1,
                        },
                        Ok(r) => *errors.entry(format!("HTTP {}", r.status)).or_default() += 1,
                        Err(e) => *errors.entry(format!("transport: {}", e.kind())).or_default() += 1,
                    }
                }
                (samples, errors)
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for w in workers {
        let (s, e) = w.await.unwrap();
        samples.extend(s);
        for (k, v) in e {
            *errors.entry(k).or_default() += v;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();

    // Check every number (a ceiling run has none).
    let numbers: &[Sample] = if ceiling { &[] } else { &samples };
    let mut distinct = HashSet::new();
    let duplicates = numbers.iter().filter(|s| !distinct.insert((bodies_key(args.first_counter + s.counter), s.number.clone()))).count();
    let mut per_counter: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
    for s in numbers {
        per_counter.entry(s.counter).or_default().push(s.sequence);
    }
    if let Some(path) = &args.record {
        let received_at = |s: &Sample| (started_unix_ms + s.sent_at_ms + s.micros as f64 / 1000.0) as u64;
        let lines: String = samples.iter().map(|s| format!("{}\t{}\t{}\t{}\n", s.number, s.sequence, s.status, received_at(s))).collect();
        std::fs::write(path, lines).expect("write --record file");
    }
    let mut broken_runs = 0;
    for seqs in per_counter.values_mut() {
        seqs.sort();
        let contiguous = seqs.windows(2).all(|w| w[1] == w[0] + 1);
        if !contiguous {
            broken_runs += 1;
        }
    }
    let slowest = samples.iter().max_by_key(|s| s.micros).map(|s| s.sent_at_ms).unwrap_or(0.0);
    let mut lat: Vec<u64> = samples.iter().map(|s| s.micros).collect();
    lat.sort();
    let ok = samples.len();
    let failed: usize = errors.values().sum();
    let rate = ok as f64 / elapsed;
    println!(
        "loadgen: {} callers, {} counters, {} ok, {} failed in {:.2}s = {:.0} numbers/s; latency ms p50 {:.2} p95 {:.2} p99 {:.2} max {:.2}",
        args.concurrency,
        args.counters,
        ok,
        failed,
        elapsed,
        rate,
        percentile(&lat, 0.50),
        percentile(&lat, 0.95),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0)
    );
    println!("check: duplicates = {duplicates}, counters with a non-contiguous run = {broken_runs}");
    for (k, v) in &errors {
        println!("  errors {k}: {v}");
    }
    if args.json {
        println!(
            "{}",
            json!({"concurrency": args.concurrency, "counters": args.counters, "ok": ok, "failed": failed, "seconds": elapsed,
                   "numbersPerSecond": rate, "p50Ms": percentile(&lat, 0.5), "p95Ms": percentile(&lat, 0.95), "p99Ms": percentile(&lat, 0.99),
                   "maxMs": percentile(&lat, 1.0), "slowestSentAtMs": slowest, "duplicates": duplicates, "nonContiguousCounters": broken_runs})
        );
    }
    // With errors allowed (fault runs), a failed request may have consumed a sequence the caller never saw,
    // so only duplicates fail the run here; `docnum check` then accounts for every sequence in the database.
    if duplicates > 0 || (!args.allow_errors && (broken_runs > 0 || failed > 0)) {
        std::process::exit(1);
    }
}

/// Numbers are unique per (project, type); counter index identifies both.
fn bodies_key(counter: usize) -> (String, String) {
    let b = request_for(counter);
    (b["projectCode"].as_str().unwrap().to_string(), b["correspondenceTypeCode"].as_str().unwrap().to_string())
}

const EMBEDDED_ADMIN_PASSWORD: &str = "loadgen-admin";

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("docnum-loadgen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn start_embedded(dir: &std::path::Path) -> (String, String) {
    use docnum::server::auth::rate_limit::RateLimits;
    use docnum::server::clock::Clock;
    use docnum::server::config::Config;
    use docnum::server::{auth, run, AppState};
    let _ = std::fs::remove_file(dir.join("bench.db"));
    let config = Config {
        database_url: format!("sqlite://{}", dir.join("bench.db").display()),
        bootstrap_admin_password: Some(EMBEDDED_ADMIN_PASSWORD.into()),
        rate_limits: RateLimits::off(),
        counter_thread: true,
        ..Config::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut options = docnum::server::config::leptos_options();
    options.site_addr = addr;
    let state = AppState::start(config, options, Arc::new(Clock::system())).await.expect("start");
    // as `docnum serve` runs: the background checkpointer and the expiry sweep
    state.spawn_background();
    let router = run::app(&state).await.expect("router");
    tokio::spawn(async move { axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap() });
    let admin = auth::system::user_id(&state.db, "admin").await.unwrap().expect("the bootstrap admin");
    let (_, token) = auth::system::create_token(&state.db, "loadgen", &[], admin, 0).await.unwrap();
    // One hot counter must be able to go past 9,999 in a benchmark: widen SEQ for the types loadgen uses, as an
    // administrator would, through the REST API (a session: tokens are machine clients and administer nothing).
    let base = format!("http://{addr}");
    let session = open::login(&base, "admin", EMBEDDED_ADMIN_PASSWORD).await.expect("the bootstrap admin logs in");
    let mut conn = http1::Conn::new(&base);
    let snapshot = state.reference().get().await.unwrap();
    for p in &snapshot.data.projects {
        for t in TYPES {
            let type_id = snapshot.correspondence_type(None, Some(t)).unwrap().id;
            let body = json!({
                "projectId": p.id, "correspondenceTypeId": type_id, "template": "{ORIGINATOR}-{RECIPIENT}-{SEQ:8}-{YEAR:B.E.}",
                "resetScope": "YEARLY", "reason": "loadgen: room for long benchmark runs", "acknowledgeKeyChange": true,
            });
            let headers = [("Cookie", session.as_str()), ("Origin", base.as_str()), ("Content-Type", "application/json")];
            let r = conn.send("POST", "/api/v1/document-numbering/configs", &headers, body.to_string().as_bytes()).await.unwrap();
            assert_eq!(r.status, 200, "saving the wide template: {}", String::from_utf8_lossy(&r.body));
        }
    }
    (base, token)
}
