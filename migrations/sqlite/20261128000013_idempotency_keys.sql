-- Idempotency keys (SPEC §5): written in the transaction that writes the number, so a retry after a timeout, a
-- crash or a failover finds the outcome instead of taking a second number. Pruned after 24 h (retention).
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,          -- who sent the key: user:<id> or token:<id>
    idem_key TEXT NOT NULL,       -- the Idempotency-Key header (1-255 visible ASCII characters)
    fingerprint TEXT NOT NULL,    -- SHA-256 of the operation and the request as read
    operation TEXT NOT NULL,
    answer TEXT NOT NULL,         -- the outcome (JSON)
    created_at INTEGER NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idx_idempotency_keys_created ON idempotency_keys (created_at);
