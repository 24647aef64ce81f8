-- Nothing to change on SQLite (TEXT reads as text); kept so both databases carry the same migration versions.
SELECT 1;
