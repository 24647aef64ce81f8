-- The reset scope `CONTRACT`: a template may keep one never-resetting counter per contract, whose period names the
-- contract by its id (`CONTRACT_12`).

-- SQLite cannot change a CHECK constraint: the templates' table is made again with the wider one, as when
-- `FISCAL_YEAR` came. The template versions refer to it by name, so their foreign key is checked at commit.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE numbering_templates_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    correspondence_type_id INTEGER NOT NULL DEFAULT 0,
    template TEXT NOT NULL,
    reset_scope TEXT NOT NULL CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE', 'FISCAL_YEAR', 'CONTRACT')),
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

-- The counters' period form, widened to `CONTRACT_<id>` (a positive id without leading zeros): the triggers that
-- stand for the CHECK constraint are made again.
DROP TRIGGER counters_period_form_insert;
DROP TRIGGER counters_period_form_update;
CREATE TRIGGER counters_period_form_insert BEFORE INSERT ON counters
WHEN NOT (NEW.period = 'NONE'
    OR NEW.period GLOB 'YEAR_[0-9][0-9][0-9][0-9]'
    OR NEW.period GLOB 'FY_[0-9][0-9][0-9][0-9]'
    OR (NEW.period GLOB 'MONTH_[0-9][0-9][0-9][0-9]_[01][0-9]' AND substr(NEW.period, 12, 2) BETWEEN '01' AND '12')
    OR (NEW.period GLOB 'CONTRACT_[1-9]*' AND NOT substr(NEW.period, 10) GLOB '*[^0-9]*' AND length(NEW.period) <= 28))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: ck_counters_period');
END;
CREATE TRIGGER counters_period_form_update BEFORE UPDATE OF period ON counters
WHEN NOT (NEW.period = 'NONE'
    OR NEW.period GLOB 'YEAR_[0-9][0-9][0-9][0-9]'
    OR NEW.period GLOB 'FY_[0-9][0-9][0-9][0-9]'
    OR (NEW.period GLOB 'MONTH_[0-9][0-9][0-9][0-9]_[01][0-9]' AND substr(NEW.period, 12, 2) BETWEEN '01' AND '12')
    OR (NEW.period GLOB 'CONTRACT_[1-9]*' AND NOT substr(NEW.period, 10) GLOB '*[^0-9]*' AND length(NEW.period) <= 28))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: ck_counters_period');
END;
