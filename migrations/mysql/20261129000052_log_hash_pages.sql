-- The transparency log's stored hashes in pages of 256 (8 KiB each), where log_hashes held one per row: stored-hash
-- indexes are dense and only ever appended to, so a batch of events writes a few pages instead of two rows per
-- event. Rows already in log_hashes are moved into pages by the service when it starts (the order of a row's bytes
-- in a page is the order of the ids, which SQL's string aggregation does not promise on both databases);
-- log_hashes stays, emptied, until a later migration drops it.
CREATE TABLE log_hash_pages (
    page BIGINT NOT NULL PRIMARY KEY,
    hashes BLOB NOT NULL
) ENGINE=InnoDB;

-- Nothing looks entries up by counter: the index cost a B-tree insert per event.
DROP INDEX idx_log_entries_counter ON log_entries;
