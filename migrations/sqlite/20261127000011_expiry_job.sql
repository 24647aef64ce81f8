-- The reservation expiry sweep runs on one instance per interval, claimed like the daily prune (`job_runs`): with
-- every instance sweeping, each cancelled the same reservations again.
INSERT INTO job_runs (name, next_run_at) VALUES ('expiry', 0);
