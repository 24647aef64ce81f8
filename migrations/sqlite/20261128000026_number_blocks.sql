-- Blocks of numbers (`reserve-block`): each number of a block carries the block's id and whom it is for; an unconfirmed
-- one expires at the hold's end with reason `block expired`.
ALTER TABLE document_numbers ADD COLUMN block_id TEXT NULL;
ALTER TABLE document_numbers ADD COLUMN block_holder TEXT NULL;
-- only the rows of a block: the other numbers pay nothing for it
CREATE INDEX idx_document_numbers_block ON document_numbers (block_id) WHERE block_id IS NOT NULL;
