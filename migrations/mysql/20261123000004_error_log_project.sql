-- The project of the failing request, when it is known (SPEC §8: a project admin sees only their projects'
-- error rows; rows without a project are for super admins).
ALTER TABLE error_log ADD COLUMN project_id BIGINT NULL, ADD KEY idx_error_log_project (project_id, id);
