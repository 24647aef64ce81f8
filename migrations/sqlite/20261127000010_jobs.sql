-- Scheduled jobs shared by every instance on this database (SPEC §7: the daily prune runs on one instance at a
-- time). An instance runs a job only after its conditional UPDATE moved `next_run_at` past now: of several instances
-- that find it due at once, one changes the row and the others change nothing.
CREATE TABLE job_runs (
    name TEXT NOT NULL PRIMARY KEY,
    next_run_at INTEGER NOT NULL,
    claimed_by TEXT NULL,
    claimed_at INTEGER NULL
);
INSERT INTO job_runs (name, next_run_at) VALUES ('prune', 0);
-- The prune deletes aged rows 5,000 at a time (`retention`): these find each chunk without reading the whole table.
CREATE INDEX idx_login_attempts_created ON login_attempts (created_at);
CREATE INDEX idx_error_log_resolved ON error_log (resolved_at);
