-- The numbers' transparency log (docs/operations/transparency-log.md). A numbering event is staged in
-- log_pending by the transaction that makes it; the sequencer moves staged events into the log in batches, in the
-- order it finds them, deleting what it moved in the same transaction: none lost, none twice.
-- VARCHAR, not TEXT: MariaDB sends TEXT as a BLOB (see the init migration); BLOB, not VARBINARY, for bytes: the
-- Any driver reads VARBINARY as text.
CREATE TABLE log_pending (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    event VARCHAR(20) COLLATE utf8mb4_bin NOT NULL,
    number VARCHAR(255) NOT NULL,
    counter_id BIGINT NOT NULL,
    sequence BIGINT NULL,
    document_id VARCHAR(255) NULL,
    at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The entries in log order (idx = the leaf's index); body is the canonical text the leaf hashes.
CREATE TABLE log_entries (
    idx BIGINT NOT NULL PRIMARY KEY,
    project_code VARCHAR(100) NOT NULL,
    type_code VARCHAR(100) NOT NULL,
    number VARCHAR(255) NOT NULL,
    event VARCHAR(20) COLLATE utf8mb4_bin NOT NULL,
    counter_id BIGINT NOT NULL,
    sequence BIGINT NULL,
    body BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    KEY idx_log_entries_number (number, project_code, type_code),
    KEY idx_log_entries_counter (counter_id, sequence)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every complete subtree's hash at its stored-hash index (Crosby and Wallach's order, as Go's tlog).
CREATE TABLE log_hashes (
    id BIGINT NOT NULL PRIMARY KEY,
    hash BLOB NOT NULL
) ENGINE=InnoDB;

-- Signed checkpoints (C2SP tlog-checkpoint), one per tree size signed.
CREATE TABLE log_checkpoints (
    size BIGINT NOT NULL PRIMARY KEY,
    note VARCHAR(8000) COLLATE utf8mb4_bin NOT NULL,
    created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The tree's size and root: one row, which the sequencer's transaction locks.
CREATE TABLE log_state (
    id BIGINT NOT NULL PRIMARY KEY,
    size BIGINT NOT NULL,
    root BLOB NOT NULL,
    updated_at BIGINT NOT NULL,
    -- the log holds the events of the audit rows after this one (those before it were written before the log was)
    audit_from BIGINT NOT NULL,
    CONSTRAINT ck_log_state_one CHECK (id = 1)
) ENGINE=InnoDB;
INSERT INTO log_state (id, size, root, updated_at, audit_from)
SELECT 1, 0, x'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 0, COALESCE(MAX(id), 0) FROM audit_log;
