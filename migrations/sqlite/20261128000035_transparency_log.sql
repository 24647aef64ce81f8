-- The numbers' transparency log (docs/operations/transparency-log.md). A numbering event is staged in
-- log_pending by the transaction that makes it; the sequencer moves staged events into the log in batches, in the
-- order it finds them, deleting what it moved in the same transaction: none lost, none twice.
CREATE TABLE log_pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event TEXT NOT NULL,
    number TEXT NOT NULL,
    counter_id INTEGER NOT NULL,
    sequence INTEGER NULL,
    document_id TEXT NULL,
    at INTEGER NOT NULL
);

-- The entries in log order (idx = the leaf's index); body is the canonical text the leaf hashes.
CREATE TABLE log_entries (
    idx INTEGER PRIMARY KEY,
    project_code TEXT NOT NULL,
    type_code TEXT NOT NULL,
    number TEXT NOT NULL,
    event TEXT NOT NULL,
    counter_id INTEGER NOT NULL,
    sequence INTEGER NULL,
    body BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX idx_log_entries_number ON log_entries (number, project_code, type_code);
CREATE INDEX idx_log_entries_counter ON log_entries (counter_id, sequence);

-- Every complete subtree's hash at its stored-hash index (Crosby and Wallach's order, as Go's tlog).
CREATE TABLE log_hashes (
    id INTEGER PRIMARY KEY,
    hash BLOB NOT NULL
);

-- Signed checkpoints (C2SP tlog-checkpoint), one per tree size signed.
CREATE TABLE log_checkpoints (
    size INTEGER PRIMARY KEY,
    note TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

-- The tree's size and root: one row, which the sequencer's transaction locks.
CREATE TABLE log_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    size INTEGER NOT NULL,
    root BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    -- the log holds the events of the audit rows after this one (those before it were written before the log was)
    audit_from INTEGER NOT NULL
);
INSERT INTO log_state (id, size, root, updated_at, audit_from)
VALUES (1, 0, x'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 0, (SELECT COALESCE(MAX(id), 0) FROM audit_log));
