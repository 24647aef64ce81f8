-- Workflow engine (seed 004, ADR-001/021) and counter resets (SPEC §5). States and allowed actions are data:
-- the engine reads an instance's state from workflow_instances (never from the client), looks the action up in
-- workflow_transitions, moves the state with a version check and appends an event.

-- from_state 'NEW' is the start: the transition that creates an instance.
-- actor_rule: ANY holder of required_role, or NOT_REQUESTER (four eyes: not the user who created the instance).
CREATE TABLE workflow_transitions (
    workflow_code TEXT NOT NULL,
    from_state TEXT NOT NULL,
    action TEXT NOT NULL,
    to_state TEXT NOT NULL,
    required_role TEXT NOT NULL CHECK (required_role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN')),
    actor_rule TEXT NOT NULL DEFAULT 'ANY' CHECK (actor_rule IN ('ANY', 'NOT_REQUESTER', 'REQUESTER')),
    PRIMARY KEY (workflow_code, from_state, action)
);

INSERT INTO workflow_transitions (workflow_code, from_state, action, to_state, required_role, actor_rule) VALUES
    ('COUNTER_RESET', 'NEW', 'REQUEST', 'PENDING', 'SUPER_ADMIN', 'ANY'),
    ('COUNTER_RESET', 'PENDING', 'APPROVE', 'APPROVED', 'SUPER_ADMIN', 'NOT_REQUESTER'),
    ('COUNTER_RESET', 'PENDING', 'REJECT', 'REJECTED', 'SUPER_ADMIN', 'NOT_REQUESTER');

CREATE TABLE workflow_instances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    public_id TEXT NOT NULL UNIQUE,
    workflow_code TEXT NOT NULL,
    state TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_by INTEGER NULL REFERENCES users(id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX idx_workflow_instances_state ON workflow_instances (workflow_code, state);

CREATE TABLE workflow_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id INTEGER NOT NULL REFERENCES workflow_instances(id),
    action TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL,
    actor_id INTEGER NULL,
    actor_name TEXT NOT NULL,
    comment TEXT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX idx_workflow_events_instance ON workflow_events (instance_id, id);

-- The subject of a COUNTER_RESET instance. previous_value is the counter's last number when requested
-- (informative: the RESET_EXECUTE audit row records the value actually replaced).
CREATE TABLE counter_reset_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id INTEGER NOT NULL UNIQUE REFERENCES workflow_instances(id),
    counter_id INTEGER NOT NULL REFERENCES counters(id),
    previous_value INTEGER NOT NULL,
    new_value INTEGER NOT NULL CHECK (new_value >= 0),
    reason TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    requested_at INTEGER NOT NULL
);
CREATE INDEX idx_counter_reset_requests_counter ON counter_reset_requests (counter_id);

-- Numbers a reset released for reuse: moved out of document_numbers (whose unique keys would refuse the
-- reissue), kept here as they were. The same number may be released by more than one reset, so no unique key.
CREATE TABLE released_numbers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    original_id INTEGER NOT NULL,
    counter_id INTEGER NOT NULL REFERENCES counters(id),
    project_id INTEGER NOT NULL,
    corr_type_id INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    revision TEXT NOT NULL,
    number TEXT NOT NULL,
    template TEXT NOT NULL,
    status TEXT NOT NULL,
    token TEXT NULL,
    document_id TEXT NULL,
    user_id INTEGER NULL,
    api_token_id INTEGER NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NULL,
    confirmed_at INTEGER NULL,
    cancelled_at INTEGER NULL,
    cancel_reason TEXT NULL,
    reset_request_id INTEGER NOT NULL REFERENCES counter_reset_requests(id),
    released_at INTEGER NOT NULL
);
CREATE INDEX idx_released_numbers_counter ON released_numbers (counter_id, sequence);

CREATE TRIGGER workflow_events_no_update BEFORE UPDATE ON workflow_events
BEGIN
    SELECT RAISE(ABORT, 'workflow_events is append-only');
END;

CREATE TRIGGER workflow_events_no_delete BEFORE DELETE ON workflow_events
BEGIN
    SELECT RAISE(ABORT, 'workflow_events is append-only');
END;

CREATE TRIGGER counter_reset_requests_no_update BEFORE UPDATE ON counter_reset_requests
BEGIN
    SELECT RAISE(ABORT, 'counter_reset_requests is append-only');
END;

CREATE TRIGGER counter_reset_requests_no_delete BEFORE DELETE ON counter_reset_requests
BEGIN
    SELECT RAISE(ABORT, 'counter_reset_requests is append-only');
END;

CREATE TRIGGER released_numbers_no_update BEFORE UPDATE ON released_numbers
BEGIN
    SELECT RAISE(ABORT, 'released_numbers is append-only');
END;

CREATE TRIGGER released_numbers_no_delete BEFORE DELETE ON released_numbers
BEGIN
    SELECT RAISE(ABORT, 'released_numbers is append-only');
END;
