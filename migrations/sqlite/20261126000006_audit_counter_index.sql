-- A counter's audit rows are all on its own chain (`counter:<id>`), so the chain's unique key
-- (chain_key, chain_seq) already finds them. The index on (counter_id, sequence) put one more random page
-- into every issued number's write (spread over many counters, about one page in seven); its readers now
-- go through chain_key.
DROP INDEX idx_audit_counter;
