-- A counter's audit chain head moves into the counter's own row. Every batch moves both, each behind its own
-- fence (version, chain_length); in one row that is one UPDATE of one row, where the head in `audit_chains` was a
-- second row locked and changed in every batch. The other chains (`admin`) keep their heads in `audit_chains`.
ALTER TABLE counters
    ADD COLUMN chain_hash VARCHAR(128) COLLATE utf8mb4_bin NOT NULL DEFAULT 'GENESIS',
    ADD COLUMN chain_length BIGINT NOT NULL DEFAULT 0;
UPDATE counters c JOIN audit_chains a ON a.chain_key = CONCAT('counter:', c.id)
SET c.chain_hash = a.head_hash, c.chain_length = a.length;
DELETE a FROM audit_chains a JOIN counters c ON a.chain_key = CONCAT('counter:', c.id);
