-- Retiring a template (SPEC §5, seed 003 §5.2): a (project, type) template stops being used, the next one of the
-- SPEC §3 order applies; its row and its versions stay (history). A new save brings it back.
ALTER TABLE numbering_templates ADD COLUMN retired_at BIGINT NULL;
