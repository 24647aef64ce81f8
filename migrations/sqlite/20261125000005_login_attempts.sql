-- Every login, failed or successful (SPEC §8): when, the username as typed (at most 100 characters), the user
-- when the name is known, the client address (as resolved behind trusted proxies), the user agent (at most 300
-- characters) and the outcome: OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE. Super admins read it.
CREATE TABLE login_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at INTEGER NOT NULL,
    username TEXT NOT NULL,
    user_id INTEGER NULL,
    ip_address TEXT NULL,
    user_agent TEXT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX idx_login_attempts_username ON login_attempts (username, id);
CREATE INDEX idx_login_attempts_outcome ON login_attempts (outcome, id);
