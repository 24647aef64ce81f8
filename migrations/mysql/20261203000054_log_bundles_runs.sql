-- The log's entries without a row each. log_entries wrote a row and a number-index entry per event, most of what
-- the log cost a number. Now the entries' texts are kept in bundles of 256 (the bytes of the entries tile), and
-- receipts find a number's entry through its audit row and the run of its counter's events: one row per counter per
-- sequencer batch. Rows already in log_entries are moved over by the service when it starts (matching each to its
-- audit row needs the log's own rules); log_entries stays, emptied, until a later migration drops it.
CREATE TABLE log_bundles (
    bundle BIGINT NOT NULL PRIMARY KEY,
    entries MEDIUMBLOB NOT NULL
) ENGINE=InnoDB;

-- Leaves first_idx.. are the events at these positions of the counter's audit chain (`chain`: ranges, each a
-- big-endian start and length); first_chain and last_chain are the smallest and largest of them.
CREATE TABLE log_runs (
    counter_id BIGINT NOT NULL,
    first_chain BIGINT NOT NULL,
    last_chain BIGINT NOT NULL,
    first_idx BIGINT NOT NULL,
    chain BLOB NOT NULL,
    PRIMARY KEY (counter_id, first_chain)
) ENGINE=InnoDB;
