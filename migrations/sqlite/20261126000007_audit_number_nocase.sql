-- The audit search matches a number by prefix with LIKE, which SQLite makes case-insensitive; it can use an index
-- only if the index compares as LIKE does (NOCASE). With the BINARY index the search read the whole audit table.
DROP INDEX idx_audit_number;
CREATE INDEX idx_audit_number ON audit_log (document_number COLLATE NOCASE);
