-- The project of the failing request, when it is known (SPEC §8: a project admin sees only their projects'
-- error rows; rows without a project are for super admins).
ALTER TABLE error_log ADD COLUMN project_id INTEGER NULL;
CREATE INDEX idx_error_log_project ON error_log (project_id, id);
