//! `docnum`: the document numbering service and its administrative commands.
// the Leptos view types are deep; release builds monomorphize them in the binary too
#![recursion_limit = "512"]

use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use docnum::server::auth::rate_limit::RateLimits;
use docnum::server::clock::Clock;
use docnum::server::config::{parse_trusted_proxy, Config};
use docnum::server::db::Db;
use docnum::server::retention::{self, RetentionConfig};
use docnum::server::{audit, auth, run};

#[derive(Parser)]
#[command(name = "docnum", about = "Document numbering service")]
struct Cli {
    /// sqlite://file.db (embedded default) or mysql://user:pass@host/db (TLS: ?ssl-mode=VERIFY_IDENTITY&ssl-ca=<file>).
    /// Also DATABASE_URL_FILE.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://docnum.db", global = true, hide_env_values = true)]
    database_url: String,
    /// MariaDB with failover: every server of the replication set (host:port, comma-separated); the service writes to
    /// the one that is not read-only, and follows a promotion (docs/operations/README.md#failover). The URL gives the user and the database.
    #[arg(long, env = "DATABASE_SERVERS", value_delimiter = ',', global = true)]
    database_servers: Vec<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

// parsed once at start: the size of the serve arguments beside the other commands' costs nothing
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the web app and the REST API (the default).
    Serve(ServeArgs),
    /// Create a user.
    CreateUser {
        #[arg(long)]
        username: String,
        #[arg(long, env = "NEW_USER_PASSWORD")]
        password: String,
        /// STAFF, PROJECT_ADMIN or SUPER_ADMIN
        #[arg(long, default_value = "STAFF")]
        role: String,
        #[arg(long)]
        display_name: Option<String>,
        /// Project codes this user administers (PROJECT_ADMIN).
        #[arg(long = "admin-of")]
        admin_of: Vec<String>,
    },
    /// Set a user's password (audited as `cli`), e.g. the first super admin's before listening beyond loopback.
    SetPassword {
        #[arg(long)]
        username: String,
        #[arg(long, env = "NEW_USER_PASSWORD")]
        password: String,
    },
    /// Deactivate a user (audited as `cli`): they can no longer log in and their sessions stop working.
    DeactivateUser {
        #[arg(long)]
        username: String,
    },
    /// Reactivate a deactivated user (audited as `cli`).
    ReactivateUser {
        #[arg(long)]
        username: String,
    },
    /// Create an API token for a machine client; prints the secret once.
    CreateToken {
        #[arg(long)]
        name: String,
        /// Project codes the token may number (none = all projects).
        #[arg(long = "project")]
        projects: Vec<String>,
    },
    /// Recompute the audit hash chains; exits non-zero if anything was altered.
    VerifyAudit,
    /// Check every number in the database: no duplicate, per counter every sequence 1..last issued or
    /// explained in the audit log, audit chains intact. Optionally, every number in FILE (one per line,
    /// first tab-separated field) must exist. Prints a JSON report; exits 2 on any problem.
    Check {
        #[arg(long)]
        received: Option<std::path::PathBuf>,
    },
    /// A consistent copy of the SQLite database while the service is serving it (SQLite's `VACUUM INTO`: one read
    /// transaction, writers go on beside it). FILE must not exist. For MariaDB, see deploy/README.md (mariadb-backup).
    /// The witness file beside the database is not copied: after a restore it is what finds the numbers issued since.
    Backup { file: std::path::PathBuf },
    /// Verify a transparency-log receipt (a c2sp.org/tlog-proof@v1 file, `-` for standard input) offline against
    /// the log's verifier key (`/log/key`); prints the entry and which of the given witnesses cosigned it and when;
    /// exits 2 if it is not valid (or a given witness's cosignature does not verify), with the reason.
    Verify {
        file: std::path::PathBuf,
        /// The log's verifier key, or a file holding it.
        #[arg(long, env = "LOG_KEY")]
        key: String,
        /// A witness's verifier key (cosignature/v1), or a file holding one; repeat for each witness.
        #[arg(long = "witness", env = "LOG_WITNESS_KEYS", value_delimiter = ',')]
        witnesses: Vec<String>,
    },
    /// Run a witness of a transparency log (C2SP tlog-witness, docs/operations/transparency-log.md#running-a-witness):
    /// `POST /add-checkpoint` cosigns a log's checkpoint that is consistent with the last one it cosigned. Needs no
    /// database of the service.
    Witness(WitnessArgs),
    /// Make a witness's key: the private key to FILE (mode 0600, for WITNESS_KEY_FILE), the verifier key (for the
    /// log's LOG_WITNESSES and for `verify --witness`) on standard output.
    WitnessKeygen {
        file: std::path::PathBuf,
        /// The witness's name, in its cosignatures (e.g. witness.example.org/docnum).
        #[arg(long, env = "WITNESS_NAME")]
        name: String,
    },
    /// Make a signer key for the transparency log: the private key to FILE (mode 0600, for LOG_SIGNING_KEY_FILE),
    /// the verifier key on standard output.
    LogKeygen {
        file: std::path::PathBuf,
        #[arg(long, env = "LOG_ORIGIN", default_value = "numbers.docnum.local/log")]
        origin: String,
    },
    /// Delete what has aged out (docs/operations/README.md#retention): login attempts, resolved error-log rows, expired sessions; never the audit
    /// log, numbers, templates or workflows. Prints the counts as JSON; audited as `cli`.
    Prune {
        /// Only count what would go: delete nothing, audit nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        retention: RetentionArgs,
    },
}

#[derive(clap::Args)]
struct WitnessArgs {
    #[arg(long, env = "WITNESS_LISTEN_ADDR", default_value = "127.0.0.1:7380")]
    addr: String,
    /// Its private key (`docnum witness-keygen`).
    #[arg(long, env = "WITNESS_KEY_FILE")]
    key_file: std::path::PathBuf,
    /// Where it keeps each log's size and root (created when missing).
    #[arg(long, env = "WITNESS_STATE_FILE", default_value = "witness-state.json")]
    state_file: std::path::PathBuf,
    /// The verifier key of each log it witnesses (the log's `/log/key`), comma-separated or repeated.
    #[arg(long = "log", env = "WITNESS_LOGS", value_delimiter = ',', required = true)]
    logs: Vec<String>,
}

#[derive(clap::Args, Default)]
struct ServeArgs {
    /// Address to listen on (overrides Leptos.toml's site-addr).
    #[arg(long, env = "LISTEN_ADDR")]
    addr: Option<String>,
    /// Load the demo data set on first run.
    #[arg(long, env = "DEMO_DATA", default_value_t = true, action = clap::ArgAction::Set)]
    demo_data: bool,
    #[arg(long, env = "BOOTSTRAP_ADMIN_PASSWORD", hide_env_values = true)]
    bootstrap_admin_password: Option<String>,
    /// With it, `/metrics` requires `Authorization: Bearer <token>`.
    #[arg(long, env = "METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    #[arg(long, env = "RESERVATION_TTL_SECS", default_value_t = 300)]
    reservation_ttl_secs: u64,
    #[arg(long, env = "EXPIRY_SWEEP_SECS", default_value_t = 1)]
    expiry_sweep_secs: u64,
    #[command(flatten)]
    retention: RetentionArgs,
    /// How often the prune runs (one instance of those sharing the database runs it).
    #[arg(long, env = "RETENTION_INTERVAL_SECS", default_value_t = 86_400)]
    retention_interval_secs: u64,
    /// Start the service clock at this instant (RFC 3339) and let it run from there — for demos and tests.
    #[arg(long, env = "CLOCK_START")]
    clock_start: Option<String>,
    #[arg(long, env = "RATE_LIMIT_USER_PER_MIN", default_value_t = 10)]
    rate_limit_user: u32,
    #[arg(long, env = "RATE_LIMIT_IP_PER_MIN", default_value_t = 50)]
    rate_limit_ip: u32,
    #[arg(long, env = "RATE_LIMIT_GLOBAL_PER_MIN", default_value_t = 5000)]
    rate_limit_global: u32,
    #[arg(long, env = "RATE_LIMIT_TOKEN_PER_MIN", default_value_t = 6000)]
    rate_limit_token: u32,
    /// Preview, confirm and cancel have a bucket of their own: the limits above times this factor (0 = unlimited).
    #[arg(long, env = "RATE_LIMIT_LIGHT_FACTOR", default_value_t = docnum::server::auth::rate_limit::DEFAULT_LIGHT_FACTOR)]
    rate_limit_light_factor: u32,
    #[arg(long, env = "SECURE_COOKIES", default_value_t = false, action = clap::ArgAction::Set)]
    secure_cookies: bool,
    /// Comma-separated CIDRs (or addresses) of the reverse proxies whose X-Forwarded-For / -Proto / -Host are
    /// believed; from anyone else those headers are ignored. Empty = the TCP peer is the client.
    #[arg(long, env = "TRUSTED_PROXIES", value_delimiter = ',')]
    trusted_proxies: Vec<String>,
    /// Comma-separated Redis URLs for the distributed lock (one, or 3+ for a Redlock quorum). TLS: rediss://…/?ssl-ca=<file>.
    /// Also REDIS_URLS_FILE.
    #[arg(long, env = "REDIS_URLS", value_delimiter = ',', hide_env_values = true)]
    redis_urls: Vec<String>,
    /// With REDIS_URLS: a secret shared by the instances (16 characters or more); a counter's batches then go to
    /// the instance holding its lock instead of taking the lock in turn.
    #[arg(long, env = "CLUSTER_SECRET", hide_env_values = true)]
    cluster_secret: Option<String>,
    /// Where the other instances reach this one for forwarded batches (default: http:// and the listening address).
    #[arg(long, env = "ADVERTISE_URL")]
    advertise_url: Option<String>,
    /// Longest wait for a counter lock held by another instance before NB003.
    #[arg(long, env = "LOCK_MAX_WAIT_MS", default_value_t = 5000)]
    lock_max_wait_ms: u64,
    /// Base of the exponential backoff (with jitter) between lock attempts.
    #[arg(long, env = "LOCK_RETRY_BASE_MS", default_value_t = 2)]
    lock_retry_base_ms: u64,
    /// Most requests one counter transaction serves (1 = one transaction per number, the baseline).
    #[arg(long, env = "MAX_BATCH", default_value_t = 256)]
    max_batch: usize,
    /// MariaDB committers: each commits the batches of many counters (sharded by counter key) in one transaction.
    #[arg(long, env = "COMMITTERS", default_value_t = docnum::server::numbering::committer::DEFAULT_COMMITTERS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    committers: usize,
    /// Run the committers, and with a Redis lock the counter workers, on threads of their own (true), or on the shared
    /// request runtime (false).
    #[arg(long, env = "COUNTER_THREAD", default_value_t = true, action = clap::ArgAction::Set)]
    counter_thread: bool,
    /// Consecutive failed logins of one username before it must wait (1 s, doubling, at most LOGIN_MAX_WAIT_SECS); 0 = off.
    #[arg(long, env = "LOGIN_FAILURES_PER_USER", default_value_t = 5)]
    login_failures_per_user: u32,
    /// Failed logins from one client address (any usernames) before it must wait; 0 = off.
    #[arg(long, env = "LOGIN_FAILURES_PER_ADDRESS", default_value_t = 20)]
    login_failures_per_address: u32,
    /// The longest wait after failed logins (and how long after it failures are remembered).
    #[arg(long, env = "LOGIN_MAX_WAIT_SECS", default_value_t = 900)]
    login_max_wait_secs: u64,
    /// Argon2 computations (19 MiB each) at once; 0 = the machine's available parallelism.
    #[arg(long, env = "ARGON2_CONCURRENCY", default_value_t = 0)]
    argon2_concurrency: usize,
    /// After SIGTERM or Ctrl-C, seconds the requests in flight get to finish; then the process logs what is left,
    /// releases its counter locks and exits with status 1.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value_t = docnum::server::config::DEFAULT_SHUTDOWN_GRACE.as_secs_f64())]
    shutdown_grace_secs: f64,
    /// Where the counters' heads are witnessed outside the database
    /// (docs/rules/numbering.md#what-is-never-done-twice): a file path, or `off`. Default: beside
    /// a SQLite database file (`<file>.witness`); none for MariaDB.
    #[arg(long, env = "WITNESS_FILE")]
    witness_file: Option<String>,
    /// With REDIS_URLS: witness the heads in those Redis servers too, shared by the instances (needed with several
    /// instances; the servers must persist their data).
    #[arg(long, env = "WITNESS_REDIS", default_value_t = true, action = clap::ArgAction::Set)]
    witness_redis: bool,
    /// Who this instance is in `job_runs` and the webhook deliveries (default: the host's name and the process id).
    #[arg(long, env = "INSTANCE_NAME")]
    instance_name: Option<String>,
    /// Set by `cargo leptos watch`: the pages may open its live-reload socket.
    #[arg(long, env = "LEPTOS_WATCH", hide = true)]
    leptos_watch: Option<String>,
    /// How often each instance looks for webhook deliveries that are due.
    #[arg(long, env = "NOTIFY_POLL_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    notify_poll_ms: u64,
    /// Attempts of one webhook delivery before it is marked failed (super admins can replay it).
    #[arg(long, env = "NOTIFY_MAX_ATTEMPTS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    notify_max_attempts: u32,
    /// The wait after a delivery's first failure; doubled after each further one, with jitter, at most an hour.
    #[arg(long, env = "NOTIFY_BACKOFF_BASE_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    notify_backoff_base_ms: u64,
    /// How long a webhook receiver gets to answer.
    #[arg(long, env = "NOTIFY_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..))]
    notify_timeout_ms: u64,
    /// Stage every numbering event for the transparency log (off only to measure what the log costs).
    /// CA certificates (PEM) trusted for https webhook receivers, beside the system store and SSL_CERT_FILE.
    #[arg(long, env = "NOTIFY_CA_FILE")]
    notify_ca_file: Option<std::path::PathBuf>,
    /// Let webhooks point at loopback, link-local, private and unique-local addresses (refused by default).
    #[arg(long, env = "WEBHOOK_ALLOW_PRIVATE_TARGETS", default_value_t = false, action = clap::ArgAction::Set)]
    webhook_allow_private_targets: bool,
    /// The key (32 bytes: 64 hex digits or base64) the webhooks' signing secrets are sealed with at rest.
    /// Also SECRETS_KEY_FILE.
    #[arg(long, env = "SECRETS_KEY", hide_env_values = true)]
    secrets_key: Option<String>,
    #[arg(long, env = "LOG_ENABLED", default_value_t = true, action = clap::ArgAction::Set)]
    log_enabled: bool,
    /// The transparency log's name, in its checkpoints and its key (docs/operations/transparency-log.md).
    #[arg(long, env = "LOG_ORIGIN", default_value = "numbers.docnum.local/log")]
    log_origin: String,
    /// The log's signer key (`docnum log-keygen` makes one); unset: a key for this process only.
    #[arg(long, env = "LOG_SIGNING_KEY_FILE")]
    log_signing_key_file: Option<std::path::PathBuf>,
    /// A new checkpoint at most this long after the tree grew.
    #[arg(long, env = "LOG_CHECKPOINT_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    log_checkpoint_ms: u64,
    /// Or once this many entries were added since the last checkpoint.
    #[arg(long, env = "LOG_CHECKPOINT_ENTRIES", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    log_checkpoint_entries: u64,
    /// How often the log's sequencer moves committed events into the tree.
    #[arg(long, env = "LOG_SEQUENCE_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    log_sequence_ms: u64,
    /// Witnesses asked to cosign each checkpoint: `<witness vkey> <url>` entries, comma-separated.
    #[arg(long, env = "LOG_WITNESSES", value_delimiter = ',')]
    log_witnesses: Vec<String>,
    /// How long a witness gets to answer.
    #[arg(long, env = "LOG_WITNESS_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..))]
    log_witness_timeout_ms: u64,
}

// Many small, short-lived allocations per request: mimalloc costs less CPU than glibc's malloc (docs/benchmarks/http-path.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Off before the work begins: with them, memory mimalloc had given back came back as 2 MB pages zeroed by the
    // kernel, which doubled the log sequencer's CPU after each pause (docs/benchmarks/transparency-log.md).
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
        eprintln!("warning: transparent huge pages stay on: {e}");
    }
    // NAME_FILE secrets become NAME before any thread starts (the runtime's workers would race a change of the
    // environment)
    if let Err(e) = docnum::server::config::load_secret_files() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the Tokio runtime");
    runtime.block_on(async_main());
}

async fn async_main() {
    // Logs on stderr: stdout carries what a command answers (`check`'s JSON, `create-token`'s token), and a
    // slow-statement warning in the middle of it broke the scripts that read it.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,sqlx=warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if let Err(e) = run_command(cli).await {
        eprintln!("error: {}", docnum::server::error::report(e.as_ref()));
        std::process::exit(1);
    }
}

async fn run_command(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command.unwrap_or(Command::Serve(ServeArgs::parse_from_env())) {
        Command::Serve(args) => {
            let clock = Arc::new(match &args.clock_start {
                Some(s) => Clock::starting_at(chrono::DateTime::parse_from_rfc3339(s)?.with_timezone(&chrono::Utc)),
                None => Clock::system(),
            });
            let mut config = Config {
                database_url: cli.database_url,
                database_servers: servers(&cli.database_servers),
                demo_data: args.demo_data,
                bootstrap_admin_password: args.bootstrap_admin_password,
                metrics_token: args.metrics_token.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
                reservation_ttl: Duration::from_secs(args.reservation_ttl_secs),
                sweep_interval: Duration::from_secs(args.expiry_sweep_secs.max(1)),
                retention: args.retention.config(Duration::from_secs(args.retention_interval_secs.max(1))),
                rate_limits: RateLimits {
                    per_user_per_min: args.rate_limit_user,
                    per_ip_per_min: args.rate_limit_ip,
                    global_per_min: args.rate_limit_global,
                    per_token_per_min: args.rate_limit_token,
                    light_factor: args.rate_limit_light_factor,
                },
                secure_cookies: args.secure_cookies,
                trusted_proxies: args
                    .trusted_proxies
                    .iter()
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| parse_trusted_proxy(p))
                    .collect::<Result<_, _>>()?,
                max_batch: args.max_batch.max(1),
                committers: args.committers,
                counter_thread: args.counter_thread,
                login_throttle: docnum::server::auth::throttle::LoginThrottleConfig {
                    per_user_failures: args.login_failures_per_user,
                    per_address_failures: args.login_failures_per_address,
                    max_wait: Duration::from_secs(args.login_max_wait_secs.max(1)),
                    ..Default::default()
                },
                argon2_concurrency: args.argon2_concurrency,
                shutdown_grace: Duration::try_from_secs_f64(args.shutdown_grace_secs)
                    .map_err(|_| format!("SHUTDOWN_GRACE_SECS: {} is not a number of seconds", args.shutdown_grace_secs))?,
                witness_file: args.witness_file.clone(),
                witness_redis: args.witness_redis,
                instance_name: docnum::server::config::instance_name(args.instance_name.as_deref()),
                live_reload: args.leptos_watch.is_some(),
                notify: docnum::server::config::NotifyConfig {
                    poll: Duration::from_millis(args.notify_poll_ms),
                    max_attempts: args.notify_max_attempts,
                    backoff_base: Duration::from_millis(args.notify_backoff_base_ms),
                    timeout: Duration::from_millis(args.notify_timeout_ms),
                    ca_file: args.notify_ca_file.clone(),
                    allow_private_targets: args.webhook_allow_private_targets,
                    secrets_key: args
                        .secrets_key
                        .as_deref()
                        .filter(|k| !k.trim().is_empty())
                        .map(docnum::server::secrets::SecretsKey::parse)
                        .transpose()?,
                },
                log: docnum::server::config::LogConfig {
                    enabled: args.log_enabled,
                    origin: args.log_origin.clone(),
                    signing_key: match &args.log_signing_key_file {
                        Some(path) => Some(std::fs::read_to_string(path).map_err(|e| format!("LOG_SIGNING_KEY_FILE {}: {e}", path.display()))?),
                        None => None,
                    },
                    checkpoint_interval: Duration::from_millis(args.log_checkpoint_ms),
                    checkpoint_entries: args.log_checkpoint_entries,
                    sequence_interval: Duration::from_millis(args.log_sequence_ms),
                    witnesses: args
                        .log_witnesses
                        .iter()
                        .filter(|w| !w.trim().is_empty())
                        .map(|w| docnum::server::config::parse_log_witness(w))
                        .collect::<Result<_, _>>()?,
                    witness_timeout: Duration::from_millis(args.log_witness_timeout_ms),
                },
                redis_urls: args.redis_urls.into_iter().filter(|u| !u.trim().is_empty()).collect(),
                // set once the listener's address is known (below)
                cluster_secret: None,
                advertise_url: None,
                lock: docnum::server::numbering::lock::LockConfig {
                    max_wait: Duration::from_millis(args.lock_max_wait_ms),
                    retry_base: Duration::from_millis(args.lock_retry_base_ms.max(1)),
                    ..Default::default()
                },
            };
            let addr = args.addr.map(|a| a.parse()).transpose()?.unwrap_or(docnum::server::config::leptos_options().site_addr);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            config.cluster_secret = args.cluster_secret.filter(|s| !s.is_empty());
            if let Some(secret) = &config.cluster_secret {
                if secret.chars().count() < docnum::server::numbering::forward::MIN_SECRET_CHARS {
                    return Err(format!("CLUSTER_SECRET: at least {} characters", docnum::server::numbering::forward::MIN_SECRET_CHARS).into());
                }
                let local = listener.local_addr()?;
                config.advertise_url = match args.advertise_url.filter(|u| !u.is_empty()) {
                    Some(url) => Some(url.trim_end_matches('/').to_string()),
                    None if !local.ip().is_unspecified() => Some(format!("http://{local}")),
                    None => return Err("CLUSTER_SECRET with a listening address of all interfaces needs ADVERTISE_URL".into()),
                };
            }
            println!("Document numbering service listening on http://{}", listener.local_addr()?);
            run::serve(config, clock, listener).await?;
        }
        Command::CreateUser { username, password, role, display_name, admin_of } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let new = auth::users::Validated::new(&username, display_name.as_deref(), &password, &role)?;
            let snapshot = docnum::server::reference::load_snapshot(&db).await?;
            let projects = admin_of.iter().map(|c| snapshot.project(None, Some(c)).map(|p| p.id)).collect::<Result<Vec<_>, _>>()?;
            auth::users::create_user_as(&db, &cli_actor(), &new, &projects).await?;
            println!("user {} created ({})", new.username, new.role.as_str());
        }
        Command::SetPassword { username, password } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let id = user_id(&db, &username).await?;
            auth::users::set_password_as(&db, &cli_actor(), id, &password).await?;
            println!("password of {username} set");
        }
        Command::DeactivateUser { username } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let id = user_id(&db, &username).await?;
            auth::users::set_active_as(&db, &cli_actor(), id, false).await?;
            println!("user {username} deactivated");
        }
        Command::ReactivateUser { username } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let id = user_id(&db, &username).await?;
            auth::users::set_active_as(&db, &cli_actor(), id, true).await?;
            println!("user {username} reactivated");
        }
        Command::CreateToken { name, projects } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let snapshot = docnum::server::reference::load_snapshot(&db).await?;
            let ids = projects.iter().map(|c| snapshot.project(None, Some(c)).map(|p| p.id)).collect::<Result<Vec<_>, _>>()?;
            let admin = auth::system::user_id(&db, "admin").await?.ok_or("no admin user yet: start the service once")?;
            let (_, token) = auth::tokens::create_as(&db, &cli_actor(), &name, &ids, admin).await?;
            println!("{token}");
        }
        Command::Check { received } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let received: Vec<String> = match received {
                Some(path) => std::fs::read_to_string(path)?
                    .lines()
                    .filter_map(|l| l.split('\t').next())
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                None => Vec::new(),
            };
            let report = docnum::server::numbering::check::check(&db, &received).await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            if !report.ok {
                std::process::exit(2);
            }
        }
        Command::VerifyAudit => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let report = audit::verify(&db).await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            if !report.ok {
                std::process::exit(2);
            }
        }
        Command::Backup { file } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let copied = docnum::server::db::backup(&db, &file).await?;
            println!("{}", serde_json::json!({ "backup": file, "bytes": copied }));
        }
        Command::Verify { file, key, witnesses } => {
            let read_key = |k: &str| -> std::io::Result<String> {
                Ok(if std::path::Path::new(k).is_file() { std::fs::read_to_string(k)?.trim().to_string() } else { k.trim().to_string() })
            };
            let key = read_key(&key)?;
            let witnesses = witnesses.iter().filter(|w| !w.trim().is_empty()).map(|w| read_key(w)).collect::<Result<Vec<_>, _>>()?;
            let witness_keys: Vec<&str> = witnesses.iter().map(String::as_str).collect();
            let text = if file.as_os_str() == "-" { std::io::read_to_string(std::io::stdin())? } else { std::fs::read_to_string(&file)? };
            match docnum::receipt::verify_witnessed(&text, &key, &witness_keys) {
                Ok(checked) => {
                    let e = &checked.entry;
                    let seen: Vec<serde_json::Value> = checked
                        .checkpoint
                        .witnesses
                        .iter()
                        .map(|w| {
                            let (cosigned, time) = match w.cosigned {
                                docnum::receipt::Cosigned::At(t) => ("yes", Some(t)),
                                docnum::receipt::Cosigned::Invalid => ("invalid", None),
                                docnum::receipt::Cosigned::Absent => ("no", None),
                            };
                            serde_json::json!({ "name": w.name, "cosigned": cosigned, "time": time, "at": w.time_rfc3339() })
                        })
                        .collect();
                    let invalid = checked.checkpoint.witnesses.iter().any(|w| w.cosigned == docnum::receipt::Cosigned::Invalid);
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&serde_json::json!({
                            "valid": !invalid, "number": e.number, "project": e.project, "type": e.type_code, "event": e.event, "at": e.at,
                            "sequence": e.sequence, "documentSha256": e.document_sha256, "index": checked.index,
                            "log": checked.checkpoint.origin, "treeSize": checked.checkpoint.size, "witnesses": seen,
                            "otherSigners": checked.checkpoint.other_signers,
                        }))?
                    );
                    if invalid {
                        std::process::exit(2);
                    }
                }
                Err(refusal) => {
                    println!("{}", serde_json::json!({ "valid": false, "reason": refusal.reason() }));
                    std::process::exit(2);
                }
            }
        }
        Command::Witness(args) => {
            let config = docnum::server::tlog::witness::WitnessConfig {
                signing_key: std::fs::read_to_string(&args.key_file).map_err(|e| format!("WITNESS_KEY_FILE {}: {e}", args.key_file.display()))?,
                logs: args.logs.into_iter().filter(|l| !l.trim().is_empty()).collect(),
                state_file: args.state_file,
            };
            let listener = tokio::net::TcpListener::bind(&args.addr).await?;
            println!("Witness listening on http://{}", listener.local_addr()?);
            docnum::server::tlog::witness::serve(config, listener).await?;
        }
        Command::WitnessKeygen { file, name } => {
            let (skey, vkey) = docnum::server::tlog::witness::generate_key(&name)?;
            use std::io::Write as _;
            use std::os::unix::fs::OpenOptionsExt as _;
            let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&file)?;
            writeln!(f, "{skey}")?;
            println!("{vkey}");
        }
        Command::LogKeygen { file, origin } => {
            let (skey, vkey) = docnum::server::tlog::generate_key(&origin);
            use std::io::Write as _;
            use std::os::unix::fs::OpenOptionsExt as _;
            let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&file)?;
            writeln!(f, "{skey}")?;
            println!("{vkey}");
        }
        Command::Prune { dry_run, retention: limits } => {
            let db = open(&cli.database_url, &cli.database_servers).await?;
            let (config, now_ms) = (limits.config(Duration::ZERO), Clock::system().now_ms());
            let report = if dry_run { retention::count(&db, now_ms, &config).await? } else { retention::prune(&db, now_ms, &config, "cli").await? };
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
    }
    Ok(())
}

/// The limits of `serve` and `prune` (docs/operations/README.md#retention); sessions always go once expired.
#[derive(clap::Args)]
struct RetentionArgs {
    /// Days a login attempt is kept.
    #[arg(long, env = "RETENTION_LOGIN_ATTEMPTS_DAYS", default_value_t = RetentionConfig::default().login_attempts_days,
          value_parser = clap::value_parser!(u32).range(1..))]
    login_attempts_days: u32,
    /// Days an error-log row is kept once resolved (unresolved rows are kept).
    #[arg(long, env = "RETENTION_RESOLVED_ERRORS_DAYS", default_value_t = RetentionConfig::default().resolved_errors_days,
          value_parser = clap::value_parser!(u32).range(1..))]
    resolved_errors_days: u32,
    /// Hours an idempotency key is kept (a retry within them gets the first answer; docs/rules/api.md#idempotency-keys says 24).
    #[arg(long, env = "RETENTION_IDEMPOTENCY_KEYS_HOURS", default_value_t = RetentionConfig::default().idempotency_keys_hours,
          value_parser = clap::value_parser!(u32).range(24..))]
    idempotency_keys_hours: u32,
    /// Days a delivered notification (and its outbox row, once every webhook has it) is kept.
    #[arg(long, env = "RETENTION_NOTIFICATIONS_DAYS", default_value_t = RetentionConfig::default().notifications_days,
          value_parser = clap::value_parser!(u32).range(1..))]
    notifications_days: u32,
}

impl Default for RetentionArgs {
    fn default() -> Self {
        let defaults = RetentionConfig::default();
        RetentionArgs {
            login_attempts_days: defaults.login_attempts_days,
            resolved_errors_days: defaults.resolved_errors_days,
            idempotency_keys_hours: defaults.idempotency_keys_hours,
            notifications_days: defaults.notifications_days,
        }
    }
}

impl RetentionArgs {
    /// The settings, with the daily job's `interval` (unused by `docnum prune`).
    fn config(&self, interval: Duration) -> RetentionConfig {
        RetentionConfig {
            login_attempts_days: self.login_attempts_days,
            resolved_errors_days: self.resolved_errors_days,
            idempotency_keys_hours: self.idempotency_keys_hours,
            interval,
            notifications_days: self.notifications_days,
        }
    }
}

impl ServeArgs {
    fn parse_from_env() -> ServeArgs {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            args: ServeArgs,
        }
        Only::parse_from(["docnum"]).args
    }
}

/// `DATABASE_SERVERS` without the empty entries of an empty or trailing-comma setting.
fn servers(given: &[String]) -> Vec<String> {
    given.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// The CLI's changes are audited under the name `cli`.
fn cli_actor() -> docnum::server::audit::AuditEntry {
    auth::users::system_actor("cli", chrono::Utc::now().timestamp_millis())
}

async fn user_id(db: &Db, username: &str) -> Result<docnum::contract::UserId, Box<dyn std::error::Error>> {
    Ok(auth::system::user_id(db, username).await?.ok_or_else(|| format!("no user {username}"))?)
}

async fn open(url: &str, servers: &[String]) -> Result<Db, Box<dyn std::error::Error>> {
    let db = Db::connect_to(url, &self::servers(servers)).await?;
    db.migrate().await?;
    Ok(db)
}
