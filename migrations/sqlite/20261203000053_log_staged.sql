-- The log's staged events, one row per transaction that makes them, where log_pending held one row per event: a
-- JSON array of the transaction's events (at most 500 a row). A batch of numbers then stages one row, and the
-- sequencer deletes one, instead of one of each per event. Events still staged move over in their order.
CREATE TABLE log_staged (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    events BLOB NOT NULL
);
INSERT INTO log_staged (events)
SELECT CAST(json_array(json_object('event', event, 'number', number, 'counter', counter_id, 'sequence', sequence, 'document', document_id, 'at', at)) AS BLOB)
FROM log_pending ORDER BY id;
DROP TABLE log_pending;
