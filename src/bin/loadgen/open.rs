//! The open model (`--rate`): requests arrive at a fixed rate whatever the service answers, as a population of
//! users does, for `--duration` seconds. Request `i` is due at `start + i / rate` and its latency counts from
//! then, not from when it could be sent: a stalled service makes the requests behind it late, and that lateness
//! is measured instead of hidden (coordinated omission). Nothing waits for an earlier answer; at most
//! `--max-in-flight` requests are out at once, and an arrival past that is dropped and counted as an error.
//!
//! The mix (the requirements' shares): of the number requests 40 % RFA, 30 % TRANSMITTAL, 30 % LETTER, MEMO
//! and the other types, each body one counter of the demo data; a share of the reserved numbers confirmed or
//! cancelled right after; previews; page loads of `/`, `/templates`, `/counters` with a logged-in session; and
//! page loads abandoned mid-answer (a raw connection closed after a few bytes or none), with and without the
//! session. Every `--interval` seconds one line: requests sent, answered well, errors by kind, latency.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::http1::{self, Conn};
use crate::{percentile, request_for, Args, Reserved, ORGS, PROJECTS, RESERVE, TYPES};

const PREVIEW: &str = "/api/v1/document-numbering/preview";
const LOGIN: &str = "/api/v1/auth/login";
const DISCIPLINES: [&str; 6] = ["GEN", "STR", "ARC", "TER", "GEO", "ROW"];
const RFA_TYPES: [&str; 4] = ["SDW", "RPT", "MAT", "SHD"];
const TRANSMITTAL_SUB_TYPES: [&str; 5] = ["11", "12", "13", "14", "21"];
/// Pages loaded to their end with the session.
const PAGES: [&str; 3] = ["/", "/templates", "/counters"];
/// Pages whose load is abandoned: `/counters` and `/` render for a while, so a hang-up lands mid-render.
const ABANDONED_PAGES: [&str; 2] = ["/counters", "/"];
/// A pooled connection idle this long is not reused: the server may close it any moment, and a request
/// written into a closing connection would fail for no fault of the service.
const MAX_IDLE: Duration = Duration::from_secs(4);

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Op {
    Reserve,
    Confirm,
    Cancel,
    Preview,
    Page,
    Abandon,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Reserve => "reserve",
            Op::Confirm => "confirm",
            Op::Cancel => "cancel",
            Op::Preview => "preview",
            Op::Page => "page",
            Op::Abandon => "abandon",
        }
    }

    /// An abandoned load lasts as long as we chose to wait: no latency of the service's.
    fn measured(self) -> bool {
        self != Op::Abandon
    }
}

/// A number request's body and what its number is unique within (project, type).
struct Body {
    json: Vec<u8>,
    project: String,
    correspondence_type: String,
}

/// The bodies of the mix, one per counter, in three classes (index ranges of `bodies`).
struct Mix {
    bodies: Vec<Body>,
    rfa: std::ops::Range<usize>,
    transmittal: std::ops::Range<usize>,
    others: std::ops::Range<usize>,
}

impl Mix {
    fn new() -> Mix {
        let mut bodies = Vec::new();
        let mut push = |v: Value| {
            let project = v["projectCode"].as_str().unwrap_or_default().to_string();
            let correspondence_type = v["correspondenceTypeCode"].as_str().unwrap_or_default().to_string();
            bodies.push(Body { json: v.to_string().into_bytes(), project, correspondence_type });
        };
        // RFA: the default template shows project, discipline and RFA type (no originator): one counter each
        for p in PROJECTS {
            for d in DISCIPLINES {
                for t in RFA_TYPES {
                    push(
                        json!({"projectCode": p, "correspondenceTypeCode": "RFA", "originatorCode": "ผรม.1", "disciplineCode": d, "rfaTypeCode": t}),
                    );
                }
            }
        }
        let rfa = 0..PROJECTS.len() * DISCIPLINES.len() * RFA_TYPES.len();
        // TRANSMITTAL: originator, recipient and sub-type
        for p in PROJECTS {
            for from in ORGS {
                for to in ORGS {
                    for s in TRANSMITTAL_SUB_TYPES {
                        push(
                            json!({"projectCode": p, "correspondenceTypeCode": "TRANSMITTAL", "originatorCode": from, "recipientCode": to, "subTypeNumber": s}),
                        );
                    }
                }
            }
        }
        let transmittal = rfa.end..rfa.end + PROJECTS.len() * ORGS.len() * ORGS.len() * TRANSMITTAL_SUB_TYPES.len();
        // LETTER, MEMO and the other types: the closed model's counters
        for i in 0..PROJECTS.len() * TYPES.len() * 25 {
            push(request_for(i));
        }
        let others = transmittal.end..bodies.len();
        Mix { bodies, rfa, transmittal, others }
    }

    /// 40 % RFA, 30 % TRANSMITTAL, 30 % the rest; a counter of the class picked by `bits`.
    fn pick(&self, share: f64, bits: u64) -> usize {
        let class = if share < 0.4 {
            &self.rfa
        } else if share < 0.7 {
            &self.transmittal
        } else {
            &self.others
        };
        class.start + (bits as usize) % class.len()
    }
}

/// splitmix64: a request's choices follow from its index alone, so two runs send the same mix.
fn mixed(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A share in [0, 1) from 53 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// What one interval saw. Sent counts a request in the interval it left (or was dropped); answers and
/// latencies count in the interval the answer came, so each interval's line is final when it ends.
#[derive(Default)]
struct Interval {
    sent: u64,
    ok: u64,
    errors: BTreeMap<String, u64>,
    micros: BTreeMap<Op, Vec<u64>>,
}

impl Interval {
    fn measured_sorted(&self) -> Vec<u64> {
        let mut all: Vec<u64> = self.micros.iter().filter(|(op, _)| op.measured()).flat_map(|(_, v)| v.iter().copied()).collect();
        all.sort_unstable();
        all
    }

    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

struct ReceivedNumber {
    counter: usize,
    sequence: i64,
    number: String,
    status: &'static str,
}

#[derive(Default)]
struct Tally {
    intervals: Vec<Interval>,
    received: Vec<ReceivedNumber>,
}

/// Keep-alive connections to one instance, shared by the requests in flight: the freshest is reused first.
struct Pool {
    base: String,
    idle: Mutex<Vec<(Conn, Instant)>>,
}

impl Pool {
    fn take(&self) -> Conn {
        let mut idle = self.idle.lock().unwrap();
        while let Some((conn, since)) = idle.pop() {
            if since.elapsed() < MAX_IDLE {
                return conn;
            }
        }
        Conn::new(&self.base)
    }

    fn give_back(&self, conn: Conn) {
        if conn.is_connected() {
            self.idle.lock().unwrap().push((conn, Instant::now()));
        }
    }
}

/// Everything the requests of a run share.
struct Run {
    start: Instant,
    interval: Duration,
    intervals: usize,
    timeout: Duration,
    pools: Vec<Pool>,
    /// The session cookie of each instance (`docnum_session=…`); empty without `--login`.
    cookies: Vec<String>,
    token: String,
    mix: Mix,
    shares: Shares,
    tally: Mutex<Tally>,
    in_flight: AtomicUsize,
}

#[derive(Clone, Copy)]
struct Shares {
    preview: f64,
    page: f64,
    abandon: f64,
    confirm: f64,
    cancel: f64,
}

impl Run {
    /// The interval an instant falls in; what comes after the last one (the drain) counts in the last.
    fn interval_of(&self, at: Instant) -> usize {
        let since = at.saturating_duration_since(self.start).as_secs_f64();
        ((since / self.interval.as_secs_f64()) as usize).min(self.intervals - 1)
    }

    fn sent(&self, at: Instant) {
        let idx = self.interval_of(at);
        self.tally.lock().unwrap().intervals[idx].sent += 1;
    }

    fn answered(&self, op: Op, result: Result<(), String>, latency: Duration) {
        let idx = self.interval_of(Instant::now());
        let mut tally = self.tally.lock().unwrap();
        let interval = &mut tally.intervals[idx];
        match result {
            Ok(()) => {
                interval.ok += 1;
                interval.micros.entry(op).or_default().push(latency.as_micros() as u64);
            }
            Err(kind) => *interval.errors.entry(format!("{}: {kind}", op.name())).or_default() += 1,
        }
    }

    /// One request on instance `base`, bounded by the timeout, on the connection in `slot` (or one from the pool).
    /// The connection stays in `slot` only after a whole answer: one cut off by the timeout is in an unknown state.
    async fn call(&self, base: usize, slot: &mut Option<Conn>, request: Request<'_>) -> Result<http1::Response, String> {
        let mut conn = slot.take().unwrap_or_else(|| self.pools[base].take());
        let exchange = async {
            match request {
                Request::Post { path, body } => conn.post_json(path, &self.token, body).await,
                Request::Page { path } => conn.get_page(path, &self.cookies[base]).await,
            }
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(Ok(answer)) => {
                *slot = Some(conn);
                Ok(answer)
            }
            Ok(Err(e)) => Err(format!("transport: {}", e.kind())),
            Err(_) => Err("timeout".into()),
        }
    }
}

enum Request<'a> {
    Post { path: &'a str, body: &'a [u8] },
    Page { path: &'a str },
}

/// The answer's status, and the error code when the body has one (`HTTP 503 NB003`).
fn http_error(r: &http1::Response) -> String {
    let code = serde_json::from_slice::<Value>(&r.body).ok().and_then(|v| v["code"].as_str().map(str::to_string));
    match code {
        Some(c) => format!("HTTP {} {c}", r.status),
        None => format!("HTTP {}", r.status),
    }
}

/// What arrival `i` does; it follows from `i` alone.
enum Choice {
    Reserve { counter: usize, follow_up: f64 },
    Preview { counter: usize },
    Page { path: &'static str },
    Abandon { path: &'static str, with_session: bool, read_bytes: usize, patience: Duration, reset: bool },
}

impl Choice {
    fn op(&self) -> Op {
        match self {
            Choice::Reserve { .. } => Op::Reserve,
            Choice::Preview { .. } => Op::Preview,
            Choice::Page { .. } => Op::Page,
            Choice::Abandon { .. } => Op::Abandon,
        }
    }
}

impl Run {
    fn choose(&self, i: u64) -> Choice {
        let (a, b, c) = (mixed(i), mixed(i ^ 0x5555_5555_5555_5555), mixed(i ^ 0xAAAA_AAAA_AAAA_AAAA));
        let what = unit(a);
        let s = self.shares;
        if what < s.preview {
            Choice::Preview { counter: self.mix.pick(unit(b), c) }
        } else if what < s.preview + s.page {
            Choice::Page { path: PAGES[(b % PAGES.len() as u64) as usize] }
        } else if what < s.preview + s.page + s.abandon {
            // cut off at different points: before the head, inside it, inside the streamed body, or after a while
            Choice::Abandon {
                path: ABANDONED_PAGES[(b % 2) as usize],
                with_session: ((b >> 8) & 1) == 0,
                read_bytes: [0, 1, 200, 2_000, 8_000][((b >> 16) % 5) as usize],
                patience: Duration::from_micros([0, 300, 1_000, 5_000, 20_000][((b >> 24) % 5) as usize]),
                reset: c.is_multiple_of(3),
            }
        } else {
            Choice::Reserve { counter: self.mix.pick(unit(b), c), follow_up: unit(mixed(c)) }
        }
    }

    async fn arrival(&self, i: u64, due: Instant) {
        let base = (i % self.pools.len() as u64) as usize;
        match self.choose(i) {
            Choice::Reserve { counter, follow_up } => self.reserve(base, i, counter, follow_up, due).await,
            Choice::Preview { counter } => {
                let mut slot = None;
                let answer = self.call(base, &mut slot, Request::Post { path: PREVIEW, body: &self.mix.bodies[counter].json }).await;
                self.answered(Op::Preview, ok_if_2xx(&answer), due.elapsed());
                self.give_back(base, slot);
            }
            Choice::Page { path } => {
                let mut slot = None;
                let answer = self.call(base, &mut slot, Request::Page { path }).await;
                // a page answered 303 to /login means the session was lost: an error of this run
                self.answered(Op::Page, answer.and_then(|r| if r.status == 200 { Ok(()) } else { Err(http_error(&r)) }), due.elapsed());
                self.give_back(base, slot);
            }
            Choice::Abandon { path, with_session, read_bytes, patience, reset } => {
                let cookie = if with_session { self.cookies[base].as_str() } else { "" };
                let host = http1::host_of(&self.pools[base].base);
                let result = tokio::time::timeout(self.timeout, abandon(&host, path, cookie, read_bytes, patience, reset)).await;
                let result = match result {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => Err(format!("transport: {}", e.kind())),
                    Err(_) => Err("timeout".to_string()),
                };
                self.answered(Op::Abandon, result, due.elapsed());
            }
        }
    }

    /// Reserves a number, then confirms or cancels it for a share of the arrivals, on the same connection.
    async fn reserve(&self, base: usize, i: u64, counter: usize, follow_up: f64, due: Instant) {
        let mut slot = None;
        let answer = self.call(base, &mut slot, Request::Post { path: RESERVE, body: &self.mix.bodies[counter].json }).await;
        let latency = due.elapsed();
        let reserved = match answer {
            Ok(r) if (200..300).contains(&r.status) => match serde_json::from_slice::<Reserved>(&r.body) {
                Ok(v) => v,
                Err(e) => return self.answered(Op::Reserve, Err(format!("bad body: {e}")), latency),
            },
            Ok(r) => {
                self.answered(Op::Reserve, Err(http_error(&r)), latency);
                return self.give_back(base, slot);
            }
            Err(kind) => return self.answered(Op::Reserve, Err(kind), latency),
        };
        self.answered(Op::Reserve, Ok(()), latency);
        let (confirm, cancel) = (self.shares.confirm, self.shares.cancel);
        let (op, path, body, status) = if follow_up < confirm {
            (Op::Confirm, "/api/v1/document-numbering/confirm", json!({ "token": reserved.token, "documentId": format!("OPEN-{i}") }), "CONFIRMED")
        } else if follow_up < confirm + cancel {
            (Op::Cancel, "/api/v1/document-numbering/cancel", json!({ "token": reserved.token, "reason": "loadgen open model" }), "CANCELLED")
        } else {
            (Op::Reserve, "", Value::Null, "RESERVED")
        };
        let mut final_status = status;
        if !path.is_empty() {
            let sent = Instant::now();
            self.sent(sent);
            let body = body.to_string();
            let done = self.call(base, &mut slot, Request::Post { path, body: body.as_bytes() }).await;
            let result = ok_if_2xx(&done);
            if result.is_err() {
                final_status = "RESERVED";
            }
            self.answered(op, result, sent.elapsed());
        }
        self.tally.lock().unwrap().received.push(ReceivedNumber {
            counter,
            sequence: reserved.sequence,
            number: reserved.document_number,
            status: final_status,
        });
        self.give_back(base, slot);
    }

    fn give_back(&self, base: usize, slot: Option<Conn>) {
        if let Some(conn) = slot {
            self.pools[base].give_back(conn);
        }
    }
}

fn ok_if_2xx(answer: &Result<http1::Response, String>) -> Result<(), String> {
    match answer {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(http_error(r)),
        Err(kind) => Err(kind.clone()),
    }
}

/// One page load, abandoned: the request goes out, then up to `read_bytes` of the answer are read (0: none), for
/// `patience` at most, and the connection is closed — with a reset when `reset`, as a vanished peer does.
/// Only a connection or a request that cannot be made is an error.
async fn abandon(host: &str, path: &str, cookie: &str, read_bytes: usize, patience: Duration, reset: bool) -> io::Result<()> {
    let mut tcp = TcpStream::connect(host).await?;
    let cookie = if cookie.is_empty() { String::new() } else { format!("Cookie: {cookie}\r\n") };
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/html\r\n{cookie}Connection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await?;
    let mut buf = vec![0u8; read_bytes.max(1)];
    let mut got = 0;
    let give_up = Instant::now() + patience;
    while got < read_bytes {
        match tokio::time::timeout_at(give_up, tcp.read(&mut buf[got..])).await {
            Ok(Ok(n)) if n > 0 => got += n,
            _ => break,
        }
    }
    if reset {
        tcp.set_zero_linger()?;
    }
    Ok(())
}

/// Logs in on one instance; the session cookie its page loads send.
pub async fn login(base: &str, username: &str, password: &str) -> Result<String, String> {
    let mut conn = Conn::new(base);
    let body = json!({ "username": username, "password": password }).to_string();
    let answer = conn.send("POST", LOGIN, &[("Content-Type", "application/json")], body.as_bytes()).await.map_err(|e| format!("{base}: {e}"))?;
    if answer.status != 200 || answer.cookies.is_empty() {
        return Err(format!("{base}: login answered {} {}", answer.status, String::from_utf8_lossy(&answer.body)));
    }
    Ok(answer.cookies)
}

/// Prints each interval's line as soon as it has ended, but the last (printed after the drain).
async fn print_intervals(run: Arc<Run>) {
    for idx in 0..run.intervals - 1 {
        tokio::time::sleep_until(run.start + run.interval * (idx as u32 + 1) + Duration::from_millis(20)).await;
        let line = interval_line(&run, idx);
        println!("{line}");
    }
}

fn interval_line(run: &Run, idx: usize) -> String {
    let tally = run.tally.lock().unwrap();
    let it = &tally.intervals[idx];
    let lat = it.measured_sorted();
    let errors = if it.errors.is_empty() {
        String::new()
    } else {
        format!(" [{}]", it.errors.iter().map(|(k, v)| format!("{k} ×{v}")).collect::<Vec<_>>().join(", "))
    };
    format!(
        "{:>8} {:>7} {:>9} {:>9} {:>7}  {:>8.2} {:>8.2} {:>8.2} {:>9.1}  {:>9}{errors}",
        label(run, idx),
        idx + 1,
        it.sent,
        it.ok,
        it.error_count(),
        percentile(&lat, 0.50),
        percentile(&lat, 0.95),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0),
        run.in_flight.load(Ordering::Relaxed),
    )
}

/// `min` or `s`: the unit the interval numbers count in.
fn label(run: &Run, idx: usize) -> String {
    let end = run.interval.as_secs() * (idx as u64 + 1);
    if run.interval.as_secs().is_multiple_of(60) {
        format!("{}m", end / 60)
    } else {
        format!("{end}s")
    }
}

const HEADER: &str = "     end  interval      sent        ok  errors    p50 ms   p95 ms   p99 ms    max ms  in flight";

/// The open model run; returns the process's exit code.
pub async fn run(args: &Args, rate: f64, bases: Vec<String>, token: String, login_as: Option<(String, String)>) -> i32 {
    let shares = Shares {
        preview: args.preview_share,
        page: args.page_share,
        abandon: args.abandon_share,
        confirm: args.confirm_ratio,
        cancel: args.cancel_ratio,
    };
    if !rate.is_finite() || rate <= 0.0 || args.duration == 0 || args.interval == 0 || args.max_in_flight == 0 {
        eprintln!("--rate, --duration, --interval and --max-in-flight must be positive");
        return 2;
    }
    if [shares.preview, shares.page, shares.abandon].iter().any(|s| !(0.0..=1.0).contains(s)) || shares.preview + shares.page + shares.abandon > 1.0 {
        eprintln!("--preview-share, --page-share and --abandon-share are shares of the arrivals: each in 0..1, together at most 1");
        return 2;
    }
    if let Some(bad) = bases.iter().find(|b| !is_loopback(b)) {
        eprintln!("the open model drives loopback services only: {bad}");
        return 2;
    }
    let cookies = if shares.page > 0.0 || shares.abandon > 0.0 {
        let Some((username, password)) = login_as else {
            eprintln!("page loads need a session: give --login USER:PASSWORD (or --page-share 0 --abandon-share 0)");
            return 2;
        };
        let mut cookies = Vec::new();
        for base in &bases {
            match login(base, &username, &password).await {
                Ok(c) => cookies.push(c),
                Err(e) => {
                    eprintln!("login failed: {e}");
                    return 2;
                }
            }
        }
        cookies
    } else {
        vec![String::new(); bases.len()]
    };
    let duration = Duration::from_secs(args.duration);
    let interval = Duration::from_secs(args.interval);
    let intervals = args.duration.div_ceil(args.interval) as usize;
    let run = Arc::new(Run {
        start: Instant::now() + Duration::from_millis(50),
        interval,
        intervals,
        timeout: Duration::from_secs(args.timeout_secs),
        pools: bases.iter().map(|b| Pool { base: b.clone(), idle: Mutex::new(Vec::new()) }).collect(),
        cookies,
        token,
        mix: Mix::new(),
        shares,
        tally: Mutex::new(Tally { intervals: (0..intervals).map(|_| Interval::default()).collect(), received: Vec::new() }),
        in_flight: AtomicUsize::new(0),
    });
    let reserve_share = 1.0 - shares.preview - shares.page - shares.abandon;
    println!(
        "open model: {rate}/s for {}s over {} instance(s), at most {} in flight; arrivals: reserve {:.0} % (RFA 40 / TRANSMITTAL 30 / other types 30; \
         then confirm {:.0} %, cancel {:.0} %), preview {:.0} %, page load {:.0} %, abandoned page load {:.0} %",
        args.duration,
        bases.len(),
        args.max_in_flight,
        reserve_share * 100.0,
        shares.confirm * 100.0,
        shares.cancel * 100.0,
        shares.preview * 100.0,
        shares.page * 100.0,
        shares.abandon * 100.0
    );
    println!("latency from each request's due time; sent counts in the interval it left, answers in the interval they came");
    println!("{HEADER}");
    let printer = tokio::spawn(print_intervals(run.clone()));

    let end = run.start + duration;
    for i in 0u64.. {
        let due = run.start + Duration::from_secs_f64(i as f64 / rate);
        if due >= end {
            break;
        }
        tokio::time::sleep_until(due).await;
        run.sent(due);
        if run.in_flight.load(Ordering::Relaxed) >= args.max_in_flight {
            run.answered(run.choose(i).op(), Err("dropped: in-flight cap".into()), Duration::ZERO);
            continue;
        }
        run.in_flight.fetch_add(1, Ordering::Relaxed);
        let each = run.clone();
        tokio::spawn(async move {
            each.arrival(i, due).await;
            each.in_flight.fetch_sub(1, Ordering::Relaxed);
        });
    }
    // the drain: every request in flight ends by its timeout (a follow-up may add one more)
    let drain_until = Instant::now() + run.timeout * 2 + Duration::from_secs(1);
    while run.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < drain_until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = printer.await;
    println!("{}", interval_line(&run, intervals - 1));
    let still_out = run.in_flight.load(Ordering::Relaxed);
    summarize(args, rate, &run, still_out)
}

fn is_loopback(base: &str) -> bool {
    let host = http1::host_of(base);
    let name = host.rsplit_once(':').map(|(h, _)| h).unwrap_or(&host);
    name == "localhost" || name.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The table of every interval, the totals, the check of every number received, the report file; the exit code.
fn summarize(args: &Args, rate: f64, run: &Run, still_out: usize) -> i32 {
    let tally = run.tally.lock().unwrap();
    let mut rows = Vec::new();
    let mut all: Vec<u64> = Vec::new();
    let mut per_op: BTreeMap<Op, Vec<u64>> = BTreeMap::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let (mut sent, mut ok) = (0, 0);
    for (idx, it) in tally.intervals.iter().enumerate() {
        let lat = it.measured_sorted();
        rows.push(json!({
            "interval": idx + 1, "endSecs": run.interval.as_secs() * (idx as u64 + 1),
            "sent": it.sent, "ok": it.ok, "errors": it.error_count(), "errorsByKind": it.errors,
            "p50Ms": percentile(&lat, 0.50), "p95Ms": percentile(&lat, 0.95), "p99Ms": percentile(&lat, 0.99), "maxMs": percentile(&lat, 1.0),
            "byOp": op_stats(it.micros.iter()),
        }));
        all.extend_from_slice(&lat);
        for (op, v) in &it.micros {
            per_op.entry(*op).or_default().extend_from_slice(v);
        }
        for (k, v) in &it.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
        sent += it.sent;
        ok += it.ok;
    }
    all.sort_unstable();
    for v in per_op.values_mut() {
        v.sort_unstable();
    }
    let failed: u64 = errors.values().sum();

    // every number received: none twice within its (project, type), and per counter one contiguous run
    let bodies = &run.mix.bodies;
    let mut distinct = HashSet::new();
    let duplicates = tally
        .received
        .iter()
        .filter(|r| !distinct.insert((&bodies[r.counter].project, &bodies[r.counter].correspondence_type, r.number.as_str())))
        .count();
    let mut per_counter: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
    for r in &tally.received {
        per_counter.entry(r.counter).or_default().push(r.sequence);
    }
    for seqs in per_counter.values_mut() {
        seqs.sort_unstable();
    }
    let broken_runs = per_counter.values().filter(|seqs| !seqs.windows(2).all(|w| w[1] == w[0] + 1)).count();
    if let Some(path) = &args.record {
        let lines: String = tally.received.iter().map(|r| format!("{}\t{}\t{}\n", r.number, r.sequence, r.status)).collect();
        if let Err(e) = std::fs::write(path, lines) {
            eprintln!("cannot write {}: {e}", path.display());
            return 1;
        }
    }

    println!();
    println!("| interval | sent | ok | errors | p50 ms | p95 ms | p99 ms | max ms |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (idx, row) in rows.iter().enumerate() {
        println!("{}", markdown_row(label(run, idx), row));
    }
    println!(
        "open model: {sent} sent, {ok} ok, {failed} failed in {}s at {rate}/s; latency ms p50 {:.2} p95 {:.2} p99 {:.2} max {:.1}{}",
        args.duration,
        percentile(&all, 0.50),
        percentile(&all, 0.95),
        percentile(&all, 0.99),
        percentile(&all, 1.0),
        if still_out > 0 { format!("; {still_out} still unanswered after the drain") } else { String::new() }
    );
    for (op, v) in &per_op {
        if !op.measured() {
            println!("  {:<8} {:>9} done (how long is the client's choice)", op.name(), v.len());
            continue;
        }
        println!(
            "  {:<8} {:>9} answered  p50 {:.2} p95 {:.2} p99 {:.2} max {:.1}",
            op.name(),
            v.len(),
            percentile(v, 0.50),
            percentile(v, 0.95),
            percentile(v, 0.99),
            percentile(v, 1.0)
        );
    }
    for (k, v) in &errors {
        println!("  errors {k}: {v}");
    }
    println!("check: {} numbers received, duplicates = {duplicates}, counters with a non-contiguous run = {broken_runs}", tally.received.len());

    if let Some(path) = &args.report {
        let report = json!({
            "rate": rate, "durationSecs": args.duration, "intervalSecs": args.interval, "instances": run.pools.len(),
            "maxInFlight": args.max_in_flight, "sent": sent, "ok": ok, "failed": failed, "errorsByKind": errors,
            "p50Ms": percentile(&all, 0.50), "p95Ms": percentile(&all, 0.95), "p99Ms": percentile(&all, 0.99), "maxMs": percentile(&all, 1.0),
            "byOp": op_stats(per_op.iter()), "unansweredAfterDrain": still_out,
            "numbersReceived": tally.received.len(), "duplicates": duplicates, "nonContiguousCounters": broken_runs,
            "intervals": rows,
        });
        let text = if path.extension().is_some_and(|e| e == "md") { markdown(&report) } else { format!("{report:#}\n") };
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("cannot write {}: {e}", path.display());
            return 1;
        }
    }
    // as the closed model: with errors allowed (fault and soak runs) only duplicates fail here; `docnum check`
    // then accounts for every sequence in the database
    if duplicates > 0 || (!args.allow_errors && (broken_runs > 0 || failed > 0)) {
        1
    } else {
        0
    }
}

fn op_stats<'a>(ops: impl Iterator<Item = (&'a Op, &'a Vec<u64>)>) -> Value {
    let mut out = serde_json::Map::new();
    for (op, v) in ops {
        let mut sorted = v.clone();
        sorted.sort_unstable();
        let stats = if op.measured() {
            json!({ "answered": sorted.len(), "p50Ms": percentile(&sorted, 0.5), "p95Ms": percentile(&sorted, 0.95),
                    "p99Ms": percentile(&sorted, 0.99), "maxMs": percentile(&sorted, 1.0) })
        } else {
            json!({ "answered": sorted.len() })
        };
        out.insert(op.name().to_string(), stats);
    }
    Value::Object(out)
}

/// One interval of the report as a Markdown table row: label, sent, ok, errors, p50, p95, p99, max.
fn markdown_row(label: impl std::fmt::Display, row: &Value) -> String {
    let ms = |key: &str| row[key].as_f64().unwrap_or(0.0);
    format!(
        "| {label} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.1} |",
        row["sent"],
        row["ok"],
        row["errors"],
        ms("p50Ms"),
        ms("p95Ms"),
        ms("p99Ms"),
        ms("maxMs")
    )
}

/// The report as a Markdown table (a `.md` `--report` file).
fn markdown(report: &Value) -> String {
    let mut out = format!(
        "Open model: {}/s for {} s over {} instances — {} sent, {} ok, {} failed; p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.1} ms; \
         {} numbers received, {} duplicates\n\n| interval end (s) | sent | ok | errors | p50 ms | p95 ms | p99 ms | max ms |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
        report["rate"],
        report["durationSecs"],
        report["instances"],
        report["sent"],
        report["ok"],
        report["failed"],
        report["p50Ms"].as_f64().unwrap_or(0.0),
        report["p95Ms"].as_f64().unwrap_or(0.0),
        report["p99Ms"].as_f64().unwrap_or(0.0),
        report["maxMs"].as_f64().unwrap_or(0.0),
        report["numbersReceived"],
        report["duplicates"],
    );
    for row in report["intervals"].as_array().into_iter().flatten() {
        out.push_str(&markdown_row(&row["endSecs"], row));
        out.push('\n');
    }
    if let Some(errors) = report["errorsByKind"].as_object().filter(|e| !e.is_empty()) {
        out.push_str("\nErrors by kind:\n\n");
        for (k, v) in errors {
            out.push_str(&format!("- {k}: {v}\n"));
        }
    }
    out
}
