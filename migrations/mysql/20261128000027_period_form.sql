-- A counter's period in the form the service writes it (`numbering::PeriodKey`): YEAR_yyyy, MONTH_yyyy_mm, FY_bbbb or
-- NONE.
ALTER TABLE counters ADD CONSTRAINT ck_counters_period
    CHECK (period = 'NONE' OR period REGEXP '^(YEAR_[0-9]{4}|FY_[0-9]{4}|MONTH_[0-9]{4}_(0[1-9]|1[0-2]))$');
