-- Fiscal years (SPEC §4): a project's fiscal year starts in its first month (default October, the Thai government's
-- budget year), and a template may reset per fiscal year (`FISCAL_YEAR`, counters' period `FY_2570`).
ALTER TABLE projects ADD COLUMN fiscal_year_first_month INTEGER NOT NULL DEFAULT 10
    CHECK (fiscal_year_first_month BETWEEN 1 AND 12);

-- SQLite cannot change a CHECK constraint: the table is made again with the wider one. The template versions refer
-- to it by name, so their foreign key is checked at commit, when the new table holds the same ids.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE numbering_templates_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    correspondence_type_id INTEGER NOT NULL DEFAULT 0,
    template TEXT NOT NULL,
    reset_scope TEXT NOT NULL CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE', 'FISCAL_YEAR')),
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by INTEGER NULL REFERENCES users(id),
    retired_at INTEGER NULL,
    UNIQUE (project_id, correspondence_type_id)
);
INSERT INTO numbering_templates_new (id, project_id, correspondence_type_id, template, reset_scope, version, updated_at, updated_by, retired_at)
    SELECT id, project_id, correspondence_type_id, template, reset_scope, version, updated_at, updated_by, retired_at FROM numbering_templates;
DROP TABLE numbering_templates;
ALTER TABLE numbering_templates_new RENAME TO numbering_templates;
