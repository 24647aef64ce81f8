-- The audit search matches a number by prefix with LIKE. On SQLite that match ignores letter case (its index on the
-- column compares with NOCASE, SQLite migration 7); utf8mb4_bin made the same search case-sensitive here. The column
-- now compares without case, with utf8mb4_general_ci: one weight per character, no contractions and no ignorable
-- characters, so Thai compares as before. Its index is rebuilt with it and still serves the prefix match. The stored
-- text does not change, nor does any audit row's hash. MariaDB copies the table to do this: on a large log, upgrade in
-- a quiet hour.
ALTER TABLE audit_log MODIFY document_number VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL;
