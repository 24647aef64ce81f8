-- The statistics of /charts group the numbers of a window of days by type and day (admin_ops::store::issued_per_day):
-- without an index on created_at that is a scan of every number ever issued. created_at only grows, so the index is
-- written at its right edge (the page a number's insert already touches), not at a random page as a counter-keyed
-- index would be; it holds the project and type too, so the query reads the index alone.
CREATE INDEX idx_document_numbers_created ON document_numbers (created_at, project_id, correspondence_type_id);
