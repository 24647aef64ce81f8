//! Building and serving the whole application; shared by `main` and the integration tests.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use tokio::net::TcpListener;
use tower_sessions_sqlx_store::{MySqlStore, SqliteStore};

use crate::server::clock::Clock;
use crate::server::config::Config;
use crate::server::db::Dialect;
use crate::server::error::AppError;
use crate::server::inflight::InFlight;
use crate::server::{http, AppState};

/// The router with its session store on the same database.
pub async fn app(state: &AppState) -> Result<axum::Router, AppError> {
    match state.db.dialect {
        Dialect::Sqlite => {
            let options = SqliteConnectOptions::from_str(&state.db.url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .busy_timeout(std::time::Duration::from_secs(10));
            let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
            let store = SqliteStore::new(pool);
            store.migrate().await?;
            Ok(http::router(state.clone(), store))
        }
        Dialect::MySql => {
            // The store's default schema `tower_sessions` is a database of its own, which the service's user
            // may not be allowed to create: keep the `session` table in the service's database instead.
            // at the primary's address now, and following it (`db::primary`)
            let options = MySqlConnectOptions::from_str(&state.db.primary.url()?)?;
            let database = mysql_database_name(&options)?;
            let changes = state.db.primary.changes().clone();
            let pool = MySqlPoolOptions::new()
                .max_connections(8)
                .after_connect(|conn, _| Box::pin(async move { crate::server::db::primary::refuse_read_only_mysql(conn).await }))
                .before_acquire(move |_, meta| {
                    let stale = changes.opened_before_change(meta.age);
                    Box::pin(async move { Ok(!stale) })
                })
                .connect_with(options)
                .await?;
            state.db.primary.follow_mysql("sessions", pool.clone());
            let store = MySqlStore::new(pool)
                .with_schema_name(&database)
                .map_err(|e| AppError::internal(format!("session store for database {database:?}: {e}")))?;
            store.migrate().await?;
            Ok(http::router(state.clone(), store))
        }
    }
}

/// The database named in a MariaDB URL's path (`mysql://user@host:3306/<database>`), percent-decoded.
fn mysql_database_name(options: &MySqlConnectOptions) -> Result<String, AppError> {
    match options.get_database() {
        Some(name) if !name.is_empty() => Ok(name.to_string()),
        _ => Err(AppError::internal("DATABASE_URL for MariaDB must name a database: mysql://user:password@host:3306/<database>")),
    }
}

/// Starts the service on `listener` and runs until the process ends.
pub async fn serve(config: Config, clock: Arc<Clock>, listener: TcpListener) -> Result<(), AppError> {
    let mut options = crate::server::config::leptos_options();
    options.site_addr = listener.local_addr().map_err(|e| AppError::internal_from("listener address", e))?;
    let addr = options.site_addr;
    let state = AppState::start(config, options, clock).await?;
    // docs/rules/api.md#callers-and-authentication: the published demo password is for a server on one's own machine only
    crate::server::demo::refuse_published_password(&state.db, addr).await.map_err(AppError::forbidden)?;
    state.spawn_background();
    let router = app(&state).await?;
    // answers leave at once: with Nagle's algorithm a reply written in two parts waits for the peer's delayed ACK
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let grace = state.config.shutdown_grace;
    let (stopping, stop_began) = tokio::sync::oneshot::channel::<()>();
    let inflight_at_stop = state.inflight.clone();
    let events_at_stop = state.events.clone();
    let server = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            stop_signal().await;
            tracing::info!(grace_secs = grace.as_secs_f64(), in_flight = inflight_at_stop.len(), "stopping: finishing the requests in flight");
            // the event streams last as long as their tabs: they end now (the browsers reconnect elsewhere or later)
            events_at_stop.close();
            let _ = stopping.send(());
        })
        .into_future();
    let deadline = async {
        if stop_began.await.is_err() {
            return std::future::pending().await; // the server ended by itself
        }
        backstop(state.inflight.clone(), grace + BACKSTOP_AFTER_GRACE);
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        served = server => served.map_err(|e| AppError::internal_from("server", e))?,
        () = deadline => {
            let left = report_in_flight(&state.inflight, "the grace time is over");
            state.notifier.stop();
            // every counter lock this instance holds goes now, stuck batches' too, or the other instances wait out their TTL
            let _ = tokio::time::timeout(LOCK_RELEASE_PATIENCE, state.engine().stop_now()).await;
            return Err(AppError::internal(format!(
                "stopped {} s after the stop signal with {left} request(s) still in flight (SHUTDOWN_GRACE_SECS)",
                grace.as_secs_f64()
            )));
        }
    }
    // requests drained: release the counter locks, or the other instances wait out their TTL
    state.notifier.stop();
    state.engine().stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// At the grace deadline, how long the counter workers get to let their Redis locks go.
const LOCK_RELEASE_PATIENCE: Duration = Duration::from_secs(1);
/// After the grace time, how long the process may take to end before a thread of its own ends it: the runtime's
/// workers may all be busy or blocked, and a runtime waits for every worker as it shuts down.
const BACKSTOP_AFTER_GRACE: Duration = Duration::from_millis(1500);

/// Ends the process (exit status 1) if it is still there `after` from now, whatever its runtime is doing.
fn backstop(inflight: Arc<InFlight>, after: Duration) {
    let spawned = std::thread::Builder::new().name("stop-backstop".into()).spawn(move || {
        std::thread::sleep(after);
        report_in_flight(&inflight, "the process did not end after its grace time");
        tracing::error!("stopped by the backstop: the runtime did not finish in time");
        std::process::exit(1);
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no backstop thread for the stop");
    }
}

/// Logs each request still in flight (route, age), oldest first; returns how many there are.
fn report_in_flight(inflight: &InFlight, why: &str) -> usize {
    let left = inflight.snapshot();
    for (route, age) in &left {
        tracing::error!(route = &**route, age_secs = age.as_secs_f64(), "{why}: request still in flight");
    }
    left.len()
}

/// Ctrl-C, or SIGTERM (what service managers and `kill` send): stop accepting, finish what is in flight.
async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    /// Leptos.toml (read by the server) and Cargo.toml's `[package.metadata.leptos]` (read by cargo-leptos) name
    /// the same site: one set of values, written twice because the two tools read different files.
    #[test]
    fn leptos_toml_and_the_cargo_leptos_metadata_agree() {
        let dir = env!("CARGO_MANIFEST_DIR");
        let server = leptos::config::get_config_from_file(format!("{dir}/Leptos.toml")).expect("Leptos.toml").leptos_options;
        let build = leptos::config::get_config_from_file(format!("{dir}/Cargo.toml")).expect("Cargo.toml metadata").leptos_options;
        assert_eq!(server.output_name, build.output_name);
        assert_eq!(server.site_root, build.site_root);
        assert_eq!(server.site_pkg_dir, build.site_pkg_dir);
        assert_eq!(server.site_addr, build.site_addr);
        assert_eq!(server.reload_port, build.reload_port);
        assert_eq!(server.hash_files, build.hash_files);
        assert_eq!(server.hash_file, build.hash_file);
        // cargo leptos build --release builds the browser bundle with the same profile as scripts/lib.sh
        let text = std::fs::read_to_string(format!("{dir}/Cargo.toml")).unwrap();
        assert!(text.contains("lib-profile-release = \"wasm-release\"") && text.contains("[profile.wasm-release]"));
    }
}
