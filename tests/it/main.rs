//! The integration tests: one binary, one module per feature, sharing `common` (a `TestApp` on a real SQLite file
//! or a fresh MariaDB database) and `support` (Redis servers and `docnum` processes started on their own ports).
//! `DOCNUM_TEST_DB=mysql` runs them against MariaDB.

mod common;
mod support;

mod admin_ops;
mod api;
// the network edge: CSRF, JSON-only server functions, security headers, trusted proxies
mod edge;
mod import;
mod isolation;
// login throttling, the Argon2 bound, the record of logins
mod login;
mod metrics;
mod multiprocess;
mod redis_lock;
mod users;
