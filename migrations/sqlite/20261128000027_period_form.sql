-- A counter's period in the form the service writes it (`numbering::PeriodKey`): YEAR_yyyy, MONTH_yyyy_mm, FY_bbbb or
-- NONE. SQLite cannot add a CHECK constraint to a table without making it again (and every table that refers to it):
-- triggers refuse any other text on insert and on update, with the CHECK constraint's words.
CREATE TRIGGER counters_period_form_insert BEFORE INSERT ON counters
WHEN NOT (NEW.period = 'NONE'
    OR NEW.period GLOB 'YEAR_[0-9][0-9][0-9][0-9]'
    OR NEW.period GLOB 'FY_[0-9][0-9][0-9][0-9]'
    OR (NEW.period GLOB 'MONTH_[0-9][0-9][0-9][0-9]_[01][0-9]' AND substr(NEW.period, 12, 2) BETWEEN '01' AND '12'))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: ck_counters_period');
END;
CREATE TRIGGER counters_period_form_update BEFORE UPDATE OF period ON counters
WHEN NOT (NEW.period = 'NONE'
    OR NEW.period GLOB 'YEAR_[0-9][0-9][0-9][0-9]'
    OR NEW.period GLOB 'FY_[0-9][0-9][0-9][0-9]'
    OR (NEW.period GLOB 'MONTH_[0-9][0-9][0-9][0-9]_[01][0-9]' AND substr(NEW.period, 12, 2) BETWEEN '01' AND '12'))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: ck_counters_period');
END;
