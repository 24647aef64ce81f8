-- Notifications (SPEC §9): each event is written to the outbox in the transaction of the change it tells of, so it
-- exists exactly when the change committed. A background task fans each event out to the webhooks that want its
-- kind (one delivery row per webhook and event) and delivers them at least once, in order per counter.
-- VARCHAR, not TEXT: MariaDB sends TEXT as a BLOB (see the init migration).
CREATE TABLE notification_outbox (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    event_id VARCHAR(36) COLLATE utf8mb4_bin NOT NULL,
    kind VARCHAR(40) COLLATE utf8mb4_bin NOT NULL,
    counter_id BIGINT NULL,
    project_id BIGINT NULL,
    payload VARCHAR(8000) NOT NULL,
    created_at BIGINT NOT NULL,
    fanned_out BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY uq_notification_outbox_event (event_id),
    KEY idx_notification_outbox_fan (fanned_out, id),
    KEY idx_notification_outbox_created (created_at),
    KEY idx_notification_outbox_counter (counter_id, fanned_out, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE notification_webhooks (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    url VARCHAR(2000) NOT NULL,
    secret VARCHAR(200) COLLATE utf8mb4_bin NOT NULL,
    kinds VARCHAR(1000) COLLATE utf8mb4_bin NOT NULL,
    active BIGINT NOT NULL DEFAULT 1,
    created_by VARCHAR(200) NOT NULL,
    created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE notification_deliveries (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    webhook_id BIGINT NOT NULL,
    outbox_id BIGINT NOT NULL,
    counter_id BIGINT NOT NULL,
    state VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_owner VARCHAR(200) NULL,
    lease_until BIGINT NOT NULL DEFAULT 0,
    last_status BIGINT NULL,
    last_error VARCHAR(1000) NULL,
    delivered_at BIGINT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_notification_deliveries (webhook_id, outbox_id),
    KEY idx_notification_deliveries_due (state, next_attempt_at),
    KEY idx_notification_deliveries_order (webhook_id, counter_id, state, outbox_id),
    KEY idx_notification_deliveries_outbox (outbox_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
