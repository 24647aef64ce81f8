//! What a failed statement means (the one classification of `sqlx` errors), and the short while after a connection
//! error in which pooled connections are pinged before use. Apart from the rest of `db` so that the error type can
//! read it without a cycle (`error` → here; `db` → `error`).

use std::sync::atomic::{AtomicI64, Ordering};

/// Until when (ms) pooled connections are pinged before use: set by `suspect_connections`.
static SUSPECT_UNTIL_MS: AtomicI64 = AtomicI64::new(0);

/// Called on a connection error: for the next 10 s every pooled connection is pinged before use, so dead
/// ones are replaced instead of failing the retry.
pub(crate) fn suspect_connections() {
    SUSPECT_UNTIL_MS.store(chrono::Utc::now().timestamp_millis() + 10_000, Ordering::Relaxed);
}

/// Whether pooled connections are to be pinged before use now (a connection error in the last 10 s).
pub(crate) fn suspecting_connections() -> bool {
    chrono::Utc::now().timestamp_millis() < SUSPECT_UNTIL_MS.load(Ordering::Relaxed)
}

/// The MariaDB/MySQL error number (e.g. 1062), when `e` came from that server. Through the `Any` driver the
/// backend's own error arrives unchanged, so it downcasts; `code()` is the SQLSTATE there, not the number.
fn mysql_error_number(e: &sqlx::Error) -> Option<u16> {
    match e {
        sqlx::Error::Database(db) => db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().map(|m| m.number()),
        _ => None,
    }
}

/// What a failed statement means to the code that ran it: the one classification of `sqlx` errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DbFailure {
    /// The database refused a duplicate (unique constraint).
    /// SQLite: extended codes 2067 (UNIQUE) / 1555 (PRIMARY KEY). MariaDB: error 1062 ER_DUP_ENTRY (and kin).
    /// Not SQLSTATE 23000 alone: MariaDB uses it for foreign-key, NOT NULL and CHECK failures too.
    UniqueViolation,
    /// The database aborted a statement or transaction because another transaction held or changed the rows it
    /// needed — a lost race, worth retrying the whole transaction at once, like a version conflict: MariaDB 1213
    /// ER_LOCK_DEADLOCK (InnoDB rolled the transaction back), 1205 ER_LOCK_WAIT_TIMEOUT, 1020 ER_CHECKREAD
    /// ("record has changed since last read": MariaDB ≥ 11.6 with `innodb_snapshot_isolation=ON`, the default
    /// from 11.8, raises it instead of letting a REPEATABLE READ transaction update a row committed after its
    /// snapshot), and SQLSTATE 40001 (serialization failure) from any backend.
    /// SQLite's "database is locked" is a `Connection` failure (retried with backoff).
    RetryableConflict,
    /// The database could not be reached (worth a retry), as opposed to a refused statement. MariaDB reports a
    /// connection killed or a server shutting down as a database error (SQLSTATE class 08, 1053
    /// ER_SERVER_SHUTDOWN, 1927 ER_CONNECTION_KILLED) rather than an I/O error. A server that has turned read-only
    /// (1290 ER_OPTION_PREVENTS_STATEMENT under `--read-only`, 1836 ER_READ_ONLY_MODE) is one too: a demoted primary,
    /// whose connections are given up while the service finds the new one (`db::primary`).
    Connection,
    /// Anything else: a failure to report, not to retry.
    Other,
}

/// Classifies a `sqlx` error (see [`DbFailure`]). A retryable conflict is checked before a unique violation.
pub(crate) fn classify(e: &sqlx::Error) -> DbFailure {
    if is_retryable_conflict(e) {
        DbFailure::RetryableConflict
    } else if is_unique_violation(e) {
        DbFailure::UniqueViolation
    } else if is_connection_error(e) {
        DbFailure::Connection
    } else {
        DbFailure::Other
    }
}

/// `classify(e) == DbFailure::UniqueViolation`.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => {
            db.is_unique_violation()
                || db.code().is_some_and(|c| c == "2067" || c == "1555")
                || mysql_error_number(e).is_some_and(|n| matches!(n, 1022 | 1062 | 1169 | 1557 | 1586))
                || db.message().contains("UNIQUE constraint failed")
                || db.message().contains("Duplicate entry")
        }
        _ => false,
    }
}

/// Whether `e` is a [`DbFailure::RetryableConflict`].
pub(crate) fn is_retryable_conflict(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => {
            mysql_error_number(e).is_some_and(|n| matches!(n, 1020 | 1205 | 1213)) || db.code().is_some_and(|c| c == "40001")
        }
        _ => false,
    }
}

/// Whether `e` is a [`DbFailure::Connection`].
pub(crate) fn is_connection_error(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed | sqlx::Error::Tls(_))
        || matches!(e, sqlx::Error::Database(db) if db.message().contains("database is locked"))
        || mysql_error_number(e).is_some_and(|n| matches!(n, 1053 | 1290 | 1836 | 1927 | 2006 | 2013))
        || (mysql_error_number(e).is_some() && matches!(e, sqlx::Error::Database(db) if db.code().is_some_and(|c| c.starts_with("08"))))
}
