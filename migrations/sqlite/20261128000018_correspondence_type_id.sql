-- One name per concept: the correspondence type's column is `correspondence_type_id` everywhere, as the code calls
-- it (the counter key's JSON in the audit log keeps `corr_type_id`: rows already written and their hashes stay as
-- they are). Indexes, unique keys and foreign keys follow a renamed column.
ALTER TABLE sub_types RENAME COLUMN corr_type_id TO correspondence_type_id;
ALTER TABLE numbering_templates RENAME COLUMN corr_type_id TO correspondence_type_id;
ALTER TABLE counters RENAME COLUMN corr_type_id TO correspondence_type_id;
ALTER TABLE document_numbers RENAME COLUMN corr_type_id TO correspondence_type_id;
ALTER TABLE released_numbers RENAME COLUMN corr_type_id TO correspondence_type_id;
