-- Blocks of numbers (`reserve-block`): each number of a block carries the block's id and whom it is for; an unconfirmed
-- one expires at the hold's end with reason `block expired`.
ALTER TABLE document_numbers ADD COLUMN block_id VARCHAR(36) NULL, ADD COLUMN block_holder VARCHAR(200) NULL;
