//! The server half (feature `ssr`): storage, the numbering engine, access control and HTTP.

pub(crate) mod admin_ops;
pub mod audit;
pub mod auth;
// the browser bundle under /pkg: hashed names, precompressed files, cache headers
pub(crate) mod bundle;
pub mod clock;
pub mod config;
pub mod db;
pub mod demo;
// the network edge: client address behind trusted proxies, CSRF, JSON-only server functions, security headers
pub mod edge;
pub mod error;
pub mod errors_log;
// the live screens' hub: what changed, to every event stream that may see it, across instances through Redis
pub mod events;
pub mod http;
pub(crate) mod kept_redis;
// --- observability (docs/operations/README.md#metrics-and-alerts): Prometheus metrics and /metrics ---
pub mod metrics;
pub mod notifications;
pub mod numbering;
pub(crate) mod outbox;
pub mod reference;
// what ages out (docs/operations/README.md#retention): the daily prune, one instance at a time, and `docnum prune`
pub mod retention;
pub mod run;
pub mod secrets;
pub(crate) mod seed_paths;
pub(crate) mod sfn;
pub(crate) mod templates;
pub mod tlog;
pub mod tls;
pub(crate) mod workflow;
// bulk import of counters and legacy numbers
pub(crate) mod import;
// the requests in flight: the watchdog's gauge, and what a stop past its deadline reports
pub(crate) mod inflight;
// a page render's reactive tree, cleaned up when its client hangs up
pub(crate) mod page_owner;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use auth::rate_limit::NumberRateLimiter;
use auth::throttle::LoginThrottle;
use auth::{Access, AuthCache};
use clock::Clock;
use config::Config;
use db::Db;
use error::AppError;
use errors_log::ErrorLog;
use numbering::lock::{CounterLock, RedisLock};
use numbering::queue::CounterThreads;
use numbering::{Engine, EngineConfig, Numbering};
use reference::{Catalog, ReferenceCache};

/// Everything a request handler may need. One `Arc` clone per extraction: axum clones the state for every
/// handler and middleware of a request, and cloning the parts one by one was about a tenth of the HTTP threads' time.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The parts of [`AppState`].
pub struct Services {
    pub db: Db,
    pub(crate) clock: Arc<Clock>,
    /// Callers, tokens, logins (`auth`): the database, the clock, the token cache, the login throttle.
    pub(crate) access: Arc<Access>,
    /// The numbering requests' handles (`numbering::Numbering`): the engine, the rate limits, the cluster secret.
    pub(crate) numbering: Arc<Numbering>,
    /// Reference data, templates, workflows (`reference::Catalog`).
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) leptos_options: LeptosOptions,
    /// The bundle's file names (hashed in a production build) and how `/pkg` serves them.
    pub(crate) bundle: Arc<bundle::Bundle>,
    pub(crate) config: Arc<Config>,
    /// The requests in flight (`inflight`): their routes and ages.
    pub inflight: Arc<inflight::InFlight>,
    /// The live screens' hub (`events`): the event streams subscribe here.
    pub events: Arc<events::Events>,
    /// The webhooks and their delivery (`notifications`).
    pub(crate) notifier: Arc<notifications::Notifier>,
    /// The numbers' transparency log (`tlog`): its sequencer, checkpoints, tiles and receipts.
    pub tlog: Arc<tlog::Log>,
    /// The log's witnesses (`LOG_WITNESSES`, `tlog::cosign`), when any.
    pub log_witnesses: Option<Arc<tlog::cosign::Collector>>,
}

impl Services {
    /// The numbering engine (the numbering requests' handles hold it).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.numbering.engine
    }

    /// The reference data's cache (the catalog holds it).
    pub fn reference(&self) -> &Arc<ReferenceCache> {
        &self.catalog.reference
    }
}

impl FromRef<AppState> for Arc<tlog::Log> {
    fn from_ref(state: &AppState) -> Self {
        state.tlog.clone()
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

impl FromRef<AppState> for Arc<Access> {
    fn from_ref(state: &AppState) -> Self {
        state.access.clone()
    }
}

impl FromRef<AppState> for Arc<Engine> {
    fn from_ref(state: &AppState) -> Self {
        state.engine().clone()
    }
}

impl FromRef<AppState> for Arc<Numbering> {
    fn from_ref(state: &AppState) -> Self {
        state.numbering.clone()
    }
}

impl FromRef<AppState> for Arc<events::Events> {
    fn from_ref(state: &AppState) -> Self {
        state.events.clone()
    }
}

impl FromRef<AppState> for Arc<notifications::Notifier> {
    fn from_ref(state: &AppState) -> Self {
        state.notifier.clone()
    }
}

impl FromRef<AppState> for Arc<Catalog> {
    fn from_ref(state: &AppState) -> Self {
        state.catalog.clone()
    }
}

/// The expiry sweep's row in `job_runs`.
const EXPIRY_JOB: &str = "expiry";
/// A claim runs out this much before the next tick, so the claiming instance's own next tick finds it due again
/// (ticks drift by a few ms) and a sweep is not skipped for a whole interval.
const EXPIRY_CLAIM_SLACK_MS: i64 = 50;

impl AppState {
    /// Connects, migrates, seeds (first run), and builds the engine.
    pub async fn start(config: Config, mut leptos_options: LeptosOptions, clock: Arc<Clock>) -> Result<AppState, AppError> {
        // read once: the hashed names of a production build, or hashing off for a debug build
        let bundle = Arc::new(bundle::Bundle::load(&mut leptos_options));
        let redis_lock = !config.redis_urls.is_empty();
        let counter_thread = if config.counter_thread {
            Some(CounterThreads::start(redis_lock).map_err(|e| AppError::internal_from("counter threads", e))?)
        } else {
            None
        };
        let argon2 = auth::password::configure(config.argon2_concurrency);
        tracing::debug!(argon2, "Argon2 computations at once");
        let mut db = Db::connect_to(&config.database_url, &config.database_servers).await?;
        if let Some(t) = &counter_thread {
            db = db.counters_on(t.committers()).await?;
        }
        db.migrate().await.map_err(|e| AppError::internal_from("migrations failed", e))?;
        if config.demo_data {
            demo::seed_if_empty(&db, clock.now_ms()).await?;
        }
        demo::ensure_admin(&db, config.bootstrap_admin_password.as_deref(), clock.now_ms()).await?;
        let reference = Arc::new(ReferenceCache::load(db.clone(), Duration::from_secs(2)).await?);
        let errors = ErrorLog::new(db.clone(), clock.clone());
        // forwarding needs the lock's holder advertised, hence Redis, the secret and an address
        let forwarding = match (&config.cluster_secret, &config.advertise_url) {
            (Some(secret), Some(at)) if redis_lock => Some((secret.clone(), at.clone())),
            _ => None,
        };
        let lock = if redis_lock {
            let mut redis = RedisLock::new(&config.redis_urls, config.lock.clone())?.recording_outages_in(errors.clone());
            if let Some((_, at)) = &forwarding {
                redis = redis.forwarding_as(at.clone());
            }
            CounterLock::Redis(Arc::new(redis))
        } else {
            CounterLock::InProcess
        };
        // a backend across the network without verified TLS is said at each start
        for url in std::iter::once(&config.database_url).chain(&config.redis_urls) {
            if let Some(warning) = tls::unverified(url) {
                tracing::warn!("{warning}");
            }
        }
        // a TLS mistake (a wrong CA, a name the certificate lacks) is said at the start, naming the server: the lock would
        // otherwise only report Redis down
        for url in config.redis_urls.iter().filter(|u| u.starts_with("rediss:")) {
            let url = url.clone();
            tokio::spawn(async move {
                if let Err(why) = tls::check_redis(&url, Duration::from_secs(5)).await {
                    tracing::error!(error = %why, "Redis over TLS does not answer");
                }
            });
        }
        let lifecycle = Arc::new(numbering::counter_tx::Lifecycle::load(&db).await?);
        // the channel is the database's: instances of one service share it, another service on the same Redis does not
        let database = db::identity(&db).await?;
        let events = events::Events::start(&config.redis_urls, &database)?;
        let engine = Engine::new(
            db.clone(),
            clock.clone(),
            reference.clone(),
            lifecycle,
            errors,
            EngineConfig {
                reservation_ttl: config.reservation_ttl,
                max_batch: config.max_batch,
                committers: config.committers,
                forward_secret: forwarding.map(|(secret, _)| secret),
                witness: open_witness(&db, config.witness_file.as_deref(), if config.witness_redis { &config.redis_urls } else { &[] }).await?,
                events: Some(events.clone()),
            },
            lock,
            counter_thread,
        )?;
        let access = Arc::new(Access {
            db: db.clone(),
            clock: clock.clone(),
            tokens: Arc::new(AuthCache::default()),
            login_throttle: Arc::new(match config.redis_urls.first() {
                Some(url) => LoginThrottle::new(&config.login_throttle).shared_through(url)?,
                None => LoginThrottle::new(&config.login_throttle),
            }),
        });
        let numbering = Arc::new(Numbering {
            engine,
            limits: Arc::new(match config.redis_urls.first() {
                Some(url) => NumberRateLimiter::new(&config.rate_limits).shared_through(url)?,
                None => NumberRateLimiter::new(&config.rate_limits),
            }),
            light_limits: Arc::new(match config.redis_urls.first() {
                Some(url) => NumberRateLimiter::light(&config.rate_limits).shared_through(url)?,
                None => NumberRateLimiter::light(&config.rate_limits),
            }),
            cluster_secret: config.cluster_secret.clone(),
        });
        let catalog = Arc::new(Catalog { db: db.clone(), clock: clock.clone(), reference, events: events.clone() });
        let notifier = Arc::new(notifications::Notifier::new(db.clone(), clock.clone(), config.notify.clone(), &config.instance_name)?);
        match notifier.seal_stored_secrets().await {
            Ok(0) => {}
            Ok(sealed) => tracing::info!(sealed, "webhook signing secrets stored before SECRETS_KEY sealed"),
            Err(e) => tracing::warn!(error = %e.report(), "sealing the stored webhook secrets failed; they stay readable"),
        }
        tlog::set_enabled(config.log.enabled);
        let tlog = Arc::new(tlog::Log::new(db.clone(), clock.clone(), config.log.clone())?);
        tlog.page_loose_hashes().await?;
        tlog.bundle_loose_entries().await?;
        let log_witnesses = if config.log.witnesses.is_empty() {
            None
        } else {
            Some(Arc::new(tlog::cosign::Collector::new(tlog.clone(), &config.log.witnesses, config.log.witness_timeout)?))
        };
        Ok(AppState(Arc::new(Services {
            db,
            clock,
            access,
            numbering,
            catalog,
            leptos_options,
            bundle,
            config: Arc::new(config),
            inflight: Arc::default(),
            events,
            notifier,
            tlog,
            log_witnesses,
        })))
    }

    /// Background work: the reservation expiry sweep (one instance an interval, claimed in `job_runs`), the daily prune
    /// (`retention`), and on SQLite the WAL checkpoints.
    pub fn spawn_background(&self) {
        self.db.checkpoint_in_background();
        retention::spawn_job(self.db.clone(), self.clock.clone(), self.config.retention.clone(), self.config.instance_name.clone());
        self.notifier.spawn();
        if self.config.log.enabled {
            self.tlog.spawn();
            if let Some(collector) = &self.log_witnesses {
                collector.clone().spawn();
            }
        }
        let engine = self.engine().clone();
        let (db, clock) = (self.db.clone(), self.clock.clone());
        let every = self.config.sweep_interval;
        let every_ms = i64::try_from(every.as_millis()).unwrap_or(i64::MAX);
        let instance = self.config.instance_name.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                // one instance sweeps each interval (the others would cancel the same reservations again)
                let now = clock.now_ms();
                match retention::store::claim(&db, EXPIRY_JOB, &instance, now, now.saturating_add(every_ms).saturating_sub(EXPIRY_CLAIM_SLACK_MS))
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        tracing::warn!(error = %e.report(), "expiry sweep: claiming the run failed");
                        continue;
                    }
                }
                match engine.expire_due().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(expired = n, "expired reservations cancelled"),
                    Err(e) => tracing::warn!(error = %e.report(), "expiry sweep failed"),
                }
            }
        });
    }
}

/// The witness of the counters' heads (docs/rules/numbering.md#what-is-never-done-twice): in `WITNESS_FILE`, or
/// beside a SQLite database file (`off`: no
/// file); and with `REDIS_URLS`, shared by the instances in those Redis servers. None when neither applies.
async fn open_witness(db: &Db, setting: Option<&str>, redis_urls: &[String]) -> Result<Option<Arc<numbering::witness::Witness>>, AppError> {
    use numbering::witness::{Shared, Witness};
    let file = match setting.map(str::trim) {
        Some("off") => None,
        Some(path) if !path.is_empty() => Some(std::path::PathBuf::from(path)),
        _ => db.sqlite_file().map(|f| Witness::beside(&f)),
    };
    let shared = if redis_urls.is_empty() { None } else { Some(Shared::new(redis_urls).map_err(|e| AppError::internal_from("REDIS_URLS", e))?) };
    if file.is_none() && shared.is_none() {
        return Ok(None);
    }
    let shown = file.as_ref().map(|p| p.display().to_string());
    let database = db::identity(db).await?;
    // reading (and compacting) the file is plain file I/O: off the runtime's workers
    let opened = tokio::task::spawn_blocking(move || Witness::open(file, shared, &database))
        .await
        .map_err(|e| AppError::internal_from("opening the witness", e))?;
    let witness = opened.map_err(|e| AppError::internal_from(format!("the witness file {shown:?}"), e))?;
    tracing::info!(file = ?shown, shared = witness.is_shared(), "counter heads witnessed");
    Ok(Some(witness))
}
