-- Every login, failed or successful (SPEC §8): when, the username as typed (at most 100 characters), the user
-- when the name is known, the client address (as resolved behind trusted proxies), the user agent (at most 300
-- characters) and the outcome: OK, WRONG_PASSWORD, UNKNOWN_USER, THROTTLED or INACTIVE. Super admins read it.
CREATE TABLE login_attempts (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    username VARCHAR(100) COLLATE utf8mb4_bin NOT NULL,
    user_id BIGINT NULL,
    ip_address VARCHAR(64) NULL,
    user_agent VARCHAR(300) NULL,
    outcome VARCHAR(20) COLLATE utf8mb4_bin NOT NULL,
    KEY idx_login_attempts_username (username, id),
    KEY idx_login_attempts_outcome (outcome, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
