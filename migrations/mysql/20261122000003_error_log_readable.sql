-- The error-log page reads the message now: the Any driver reads VARCHAR as text but MEDIUMTEXT as a blob.
-- The service truncates messages to 2,000 characters before writing them.
ALTER TABLE error_log MODIFY message VARCHAR(2000) NOT NULL;
