-- Idempotency keys (SPEC §5): written in the transaction that writes the number, so a retry after a timeout, a
-- crash or a failover finds the outcome instead of taking a second number. Pruned after 24 h (retention).
-- VARCHAR, not TEXT: MariaDB sends TEXT as a BLOB (see the init migration). An answer is a few hundred characters.
CREATE TABLE idempotency_keys (
    scope VARCHAR(40) COLLATE utf8mb4_bin NOT NULL,
    idem_key VARCHAR(255) COLLATE utf8mb4_bin NOT NULL,
    fingerprint VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    operation VARCHAR(40) COLLATE utf8mb4_bin NOT NULL,
    answer VARCHAR(8000) COLLATE utf8mb4_bin NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (scope, idem_key),
    KEY idx_idempotency_keys_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
