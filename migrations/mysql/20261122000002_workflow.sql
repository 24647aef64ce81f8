-- Workflow engine (seed 004, ADR-001/021) and counter resets (SPEC §5); the same tables as
-- migrations/sqlite/20261122000002_workflow.sql, shaped as in 000001 (BIGINT, VARCHAR utf8mb4_bin, table-level keys).

-- from_state 'NEW' is the start: the transition that creates an instance.
-- actor_rule: ANY holder of required_role, or NOT_REQUESTER (four eyes: not the user who created the instance).
CREATE TABLE workflow_transitions (
    workflow_code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    from_state VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    action VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    to_state VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    required_role VARCHAR(32) COLLATE utf8mb4_bin NOT NULL,
    actor_rule VARCHAR(32) COLLATE utf8mb4_bin NOT NULL DEFAULT 'ANY',
    PRIMARY KEY (workflow_code, from_state, action),
    CONSTRAINT ck_workflow_transitions_role CHECK (required_role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN')),
    CONSTRAINT ck_workflow_transitions_rule CHECK (actor_rule IN ('ANY', 'NOT_REQUESTER', 'REQUESTER'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT INTO workflow_transitions (workflow_code, from_state, action, to_state, required_role, actor_rule) VALUES
    ('COUNTER_RESET', 'NEW', 'REQUEST', 'PENDING', 'SUPER_ADMIN', 'ANY'),
    ('COUNTER_RESET', 'PENDING', 'APPROVE', 'APPROVED', 'SUPER_ADMIN', 'NOT_REQUESTER'),
    ('COUNTER_RESET', 'PENDING', 'REJECT', 'REJECTED', 'SUPER_ADMIN', 'NOT_REQUESTER');

CREATE TABLE workflow_instances (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    public_id VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    workflow_code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    state VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    version BIGINT NOT NULL DEFAULT 0,
    created_by BIGINT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_workflow_instances_public_id (public_id),
    KEY idx_workflow_instances_state (workflow_code, state),
    CONSTRAINT fk_workflow_instances_user FOREIGN KEY (created_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE workflow_events (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    instance_id BIGINT NOT NULL,
    action VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    from_state VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    to_state VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    actor_id BIGINT NULL,
    actor_name VARCHAR(500) NOT NULL,
    comment VARCHAR(2000) NULL,
    created_at BIGINT NOT NULL,
    KEY idx_workflow_events_instance (instance_id, id),
    CONSTRAINT fk_workflow_events_instance FOREIGN KEY (instance_id) REFERENCES workflow_instances (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The subject of a COUNTER_RESET instance. previous_value is the counter's last number when requested
-- (informative: the RESET_EXECUTE audit row records the value actually replaced).
CREATE TABLE counter_reset_requests (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    instance_id BIGINT NOT NULL,
    counter_id BIGINT NOT NULL,
    previous_value BIGINT NOT NULL,
    new_value BIGINT NOT NULL,
    reason VARCHAR(2000) NOT NULL,
    requested_by BIGINT NOT NULL,
    requested_at BIGINT NOT NULL,
    UNIQUE KEY uq_counter_reset_requests_instance (instance_id),
    KEY idx_counter_reset_requests_counter (counter_id),
    CONSTRAINT ck_counter_reset_requests_value CHECK (new_value >= 0),
    CONSTRAINT fk_counter_reset_requests_instance FOREIGN KEY (instance_id) REFERENCES workflow_instances (id),
    CONSTRAINT fk_counter_reset_requests_counter FOREIGN KEY (counter_id) REFERENCES counters (id),
    CONSTRAINT fk_counter_reset_requests_user FOREIGN KEY (requested_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Numbers a reset released for reuse: moved out of document_numbers (whose unique keys would refuse the
-- reissue), kept here as they were. The same number may be released by more than one reset, so no unique key.
CREATE TABLE released_numbers (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    original_id BIGINT NOT NULL,
    counter_id BIGINT NOT NULL,
    project_id BIGINT NOT NULL,
    corr_type_id BIGINT NOT NULL,
    sequence BIGINT NOT NULL,
    revision VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    number VARCHAR(255) COLLATE utf8mb4_bin NOT NULL,
    template VARCHAR(1000) NOT NULL,
    status VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    token VARCHAR(64) COLLATE utf8mb4_bin NULL,
    document_id VARCHAR(255) COLLATE utf8mb4_bin NULL,
    user_id BIGINT NULL,
    api_token_id BIGINT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NULL,
    confirmed_at BIGINT NULL,
    cancelled_at BIGINT NULL,
    cancel_reason VARCHAR(2000) NULL,
    reset_request_id BIGINT NOT NULL,
    released_at BIGINT NOT NULL,
    KEY idx_released_numbers_counter (counter_id, sequence),
    CONSTRAINT fk_released_numbers_counter FOREIGN KEY (counter_id) REFERENCES counters (id),
    CONSTRAINT fk_released_numbers_request FOREIGN KEY (reset_request_id) REFERENCES counter_reset_requests (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER workflow_events_no_update BEFORE UPDATE ON workflow_events
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'workflow_events is append-only';

CREATE TRIGGER workflow_events_no_delete BEFORE DELETE ON workflow_events
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'workflow_events is append-only';

CREATE TRIGGER counter_reset_requests_no_update BEFORE UPDATE ON counter_reset_requests
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'counter_reset_requests is append-only';

CREATE TRIGGER counter_reset_requests_no_delete BEFORE DELETE ON counter_reset_requests
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'counter_reset_requests is append-only';

CREATE TRIGGER released_numbers_no_update BEFORE UPDATE ON released_numbers
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'released_numbers is append-only';

CREATE TRIGGER released_numbers_no_delete BEFORE DELETE ON released_numbers
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'released_numbers is append-only';
