-- The reset scope `CONTRACT`: a template may keep one never-resetting counter per contract, whose period names the
-- contract by its id (`CONTRACT_12`, a positive id without leading zeros).
ALTER TABLE numbering_templates DROP CONSTRAINT ck_numbering_templates_reset,
    ADD CONSTRAINT ck_numbering_templates_reset CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE', 'FISCAL_YEAR', 'CONTRACT'));
ALTER TABLE counters DROP CONSTRAINT ck_counters_period,
    ADD CONSTRAINT ck_counters_period
    CHECK (period = 'NONE' OR period REGEXP '^(YEAR_[0-9]{4}|FY_[0-9]{4}|MONTH_[0-9]{4}_(0[1-9]|1[0-2])|CONTRACT_[1-9][0-9]{0,18})$');
