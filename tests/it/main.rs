//! The integration tests: one binary, one module per feature, sharing `common` (a `TestApp` on a real SQLite file
//! or a fresh MariaDB database) and `support` (Redis servers and `docnum` processes started on their own ports).
//! `DOCNUM_TEST_DB=mysql` runs them against MariaDB.

mod common;
mod support;

// page loads abandoned mid-answer never wedge the server; pages send visitors without a session to /login
mod abandoned;
mod admin_ops;
mod api;
// blocks of contiguous numbers: one commit among other callers, idempotent, expiring as "block expired"
mod blocks;
// the whole-database check reads one snapshot of a live database
mod check;
// commits shared across counters: one failing counter in a group
mod committer;
// contracts: reference data under a project, the {CONTRACT} token, one counter per contract
mod contracts;
// the audit search and CSV show every stored field
mod audit_view;
// the network edge: CSRF, JSON-only server functions, security headers, trusted proxies
mod edge;
// a hot counter's batches sent to the instance holding its lock
mod forward;
// fiscal years: the first month's boundary in Bangkok time, back-dating a closed year
mod fiscal;
// MariaDB failover: the writable server of DATABASE_SERVERS, followed after a promotion; never a read-only one
mod failover;
// a retried call with its Idempotency-Key gets its first answer, never a second number
mod idempotency;
// per-type system defaults on a project created through the API (DEMO_DATA=false)
mod defaults;
// the staff pages' plain HTML forms: log in, reserve, confirm, cancel, log out without scripts
mod forms;
mod import;
mod isolation;
// every number's lifecycle as rows of the workflow table
mod lifecycle;
// the live screens' event stream: who sees what, a hung-up client freed, across instances through Redis, a stop ends it
mod live;
// login throttling, the Argon2 bound, the record of logins
mod login;
mod metrics;
// a database of an earlier schema, migrated
mod migrations;
mod multiprocess;
// webhooks: every event delivered at least once, signed, in order per counter; failures replayed
mod notifications;
mod openapi;
// the partial rows of the requirements audit: the global rate limit, an organisation outside the project
mod partial_rows;
// /health/live and /health/ready
mod probes;
mod redis_lock;
// secrets from NAME_FILE, webhook secrets sealed at rest, no secret in the log or an error answer
mod secrets;
// TLS to MariaDB, Redis and webhook receivers, with certificates made at test time; a wrong CA refused for each
mod tls;
// webhooks never reach internal addresses: refused when saved and when delivered; no redirect followed
mod webhook_targets;
// the register of a counter: every sequence with the reason of each number not confirmed, as XLSX and CSV
mod register;
// a database restored from a backup issues nothing twice: the witness, the resume, the backup command
mod restore;
// what ages out: the prune, its dry run, its audit row, one run a day across instances
mod retention;
// the requirements' paths answer like their twins
mod seed_paths;
// the numbering statistics of /charts: per Bangkok day and type, counters' utilization over time
mod stats;
// the SQLite file: WAL checkpoints in the background
mod storage;
mod tlog;
mod users;
// the log's witnesses: cosigned checkpoints, a forged history refused, the witness's state kept across restarts
mod witness;
