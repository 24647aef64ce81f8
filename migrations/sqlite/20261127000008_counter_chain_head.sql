-- A counter's audit chain head moves into the counter's own row. Every batch moves both, each behind its own
-- fence (version, chain_length); in one row that is one UPDATE and one page, where the head in `audit_chains`
-- was a second row (and, spread over many counters, about one page in eight of a number's write). The other
-- chains (`admin`) keep their heads in `audit_chains`.
ALTER TABLE counters ADD COLUMN chain_hash TEXT NOT NULL DEFAULT 'GENESIS';
ALTER TABLE counters ADD COLUMN chain_length INTEGER NOT NULL DEFAULT 0;
UPDATE counters
SET chain_hash = (SELECT head_hash FROM audit_chains WHERE chain_key = 'counter:' || counters.id),
    chain_length = (SELECT length FROM audit_chains WHERE chain_key = 'counter:' || counters.id)
WHERE EXISTS (SELECT 1 FROM audit_chains WHERE chain_key = 'counter:' || counters.id);
DELETE FROM audit_chains WHERE chain_key IN (SELECT 'counter:' || id FROM counters);
