-- Every number's lifecycle on the workflow engine (SPEC §9; seed 004, ADR-001): its states, the actions between
-- them and who may take each, as rows. required_role CLIENT: whoever may take numbers in the project (a user of
-- any role, an API token, the service's own expiry sweep); the project scope is checked before.
ALTER TABLE workflow_transitions DROP CONSTRAINT ck_workflow_transitions_role;
ALTER TABLE workflow_transitions ADD CONSTRAINT ck_workflow_transitions_role
    CHECK (required_role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN', 'CLIENT'));

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
