-- Fiscal years (SPEC §4): a project's fiscal year starts in its first month (default October, the Thai government's
-- budget year), and a template may reset per fiscal year (`FISCAL_YEAR`, counters' period `FY_2570`).
ALTER TABLE projects ADD COLUMN fiscal_year_first_month BIGINT NOT NULL DEFAULT 10,
    ADD CONSTRAINT ck_projects_fiscal_year_first_month CHECK (fiscal_year_first_month BETWEEN 1 AND 12);
ALTER TABLE numbering_templates DROP CONSTRAINT ck_numbering_templates_reset,
    ADD CONSTRAINT ck_numbering_templates_reset CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE', 'FISCAL_YEAR'));
