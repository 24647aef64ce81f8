-- Every number's lifecycle on the workflow engine (SPEC §9; seed 004, ADR-001): its states, the actions between
-- them and who may take each, as rows. required_role CLIENT: whoever may take numbers in the project (a user of
-- any role, an API token, the service's own expiry sweep); the project scope is checked before.
-- SQLite cannot change a CHECK constraint: the table is made again with the wider one.
CREATE TABLE workflow_transitions_new (
    workflow_code TEXT NOT NULL,
    from_state TEXT NOT NULL,
    action TEXT NOT NULL,
    to_state TEXT NOT NULL,
    required_role TEXT NOT NULL CHECK (required_role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN', 'CLIENT')),
    actor_rule TEXT NOT NULL DEFAULT 'ANY' CHECK (actor_rule IN ('ANY', 'NOT_REQUESTER', 'REQUESTER')),
    PRIMARY KEY (workflow_code, from_state, action)
);
INSERT INTO workflow_transitions_new (workflow_code, from_state, action, to_state, required_role, actor_rule)
    SELECT workflow_code, from_state, action, to_state, required_role, actor_rule FROM workflow_transitions;
DROP TABLE workflow_transitions;
ALTER TABLE workflow_transitions_new RENAME TO workflow_transitions;

INSERT INTO workflow_transitions (workflow_code, from_state, action, to_state, required_role, actor_rule) VALUES
    ('NUMBER', 'NEW', 'RESERVE', 'RESERVED', 'CLIENT', 'ANY'),
    ('NUMBER', 'NEW', 'GENERATE', 'CONFIRMED', 'CLIENT', 'ANY'),
    ('NUMBER', 'RESERVED', 'CONFIRM', 'CONFIRMED', 'CLIENT', 'ANY'),
    ('NUMBER', 'RESERVED', 'CANCEL', 'CANCELLED', 'CLIENT', 'ANY'),
    ('NUMBER', 'RESERVED', 'EXPIRE', 'EXPIRED', 'CLIENT', 'ANY'),
    ('NUMBER', 'CONFIRMED', 'REVISE', 'CONFIRMED', 'CLIENT', 'ANY'),
    ('NUMBER', 'CONFIRMED', 'VOID', 'VOID', 'SUPER_ADMIN', 'ANY'),
    ('NUMBER', 'RESERVED', 'RELEASE', 'RELEASED', 'SUPER_ADMIN', 'ANY'),
    ('NUMBER', 'CANCELLED', 'RELEASE', 'RELEASED', 'SUPER_ADMIN', 'ANY'),
    ('NUMBER', 'EXPIRED', 'RELEASE', 'RELEASED', 'SUPER_ADMIN', 'ANY');
