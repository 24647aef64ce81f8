-- Notifications (SPEC §9): each event is written to the outbox in the transaction of the change it tells of, so it
-- exists exactly when the change committed. A background task fans each event out to the webhooks that want its
-- kind (one delivery row per webhook and event) and delivers them at least once, in order per counter.
CREATE TABLE notification_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,      -- a UUID: the receivers de-duplicate by it
    kind TEXT NOT NULL,                 -- RESET_REQUESTED, NUMBER_CONFIRMED, COUNTER_95_PERCENT, ...
    counter_id INTEGER NULL,            -- what the event is about: the order of delivery is per counter
    project_id INTEGER NULL,
    payload TEXT NOT NULL,              -- JSON
    created_at INTEGER NOT NULL,
    fanned_out INTEGER NOT NULL DEFAULT 0 -- 1 once its deliveries exist
);
CREATE INDEX idx_notification_outbox_fan ON notification_outbox (fanned_out, id);
CREATE INDEX idx_notification_outbox_created ON notification_outbox (created_at);
CREATE INDEX idx_notification_outbox_counter ON notification_outbox (counter_id, fanned_out, id);

CREATE TABLE notification_webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,               -- the HMAC-SHA256 key; shown once, at creation
    kinds TEXT NOT NULL,                -- comma-separated event kinds; empty: every kind
    active INTEGER NOT NULL DEFAULT 1,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE notification_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id INTEGER NOT NULL,
    outbox_id INTEGER NOT NULL,
    counter_id INTEGER NOT NULL,        -- the event's counter (0: none), for the order per counter
    state TEXT NOT NULL,                -- PENDING, DELIVERED, FAILED
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT NULL,              -- the instance delivering it now
    lease_until INTEGER NOT NULL DEFAULT 0,
    last_status INTEGER NULL,
    last_error TEXT NULL,
    delivered_at INTEGER NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (webhook_id, outbox_id)
);
CREATE INDEX idx_notification_deliveries_due ON notification_deliveries (state, next_attempt_at);
CREATE INDEX idx_notification_deliveries_order ON notification_deliveries (webhook_id, counter_id, state, outbox_id);
CREATE INDEX idx_notification_deliveries_outbox ON notification_deliveries (outbox_id);
