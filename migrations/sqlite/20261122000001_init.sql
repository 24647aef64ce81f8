-- Document numbering schema (SQLite). Timestamps are Unix epoch milliseconds (UTC); absent key parts are 0, never NULL.

CREATE TABLE projects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
);

CREATE TABLE organizations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('OWNER', 'CONSULTANT', 'CONTRACTOR', 'OTHER')),
    created_at INTEGER NOT NULL
);

CREATE TABLE project_organizations (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    org_id INTEGER NOT NULL REFERENCES organizations(id),
    PRIMARY KEY (project_id, org_id)
);

CREATE TABLE correspondence_types (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE sub_types (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    corr_type_id INTEGER NOT NULL REFERENCES correspondence_types(id),
    sub_type_number TEXT NOT NULL,
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (corr_type_id, sub_type_number),
    UNIQUE (corr_type_id, code)
);

CREATE TABLE rfa_types (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);

CREATE TABLE disciplines (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN')),
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
);

CREATE TABLE project_admins (
    user_id INTEGER NOT NULL REFERENCES users(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    PRIMARY KEY (user_id, project_id)
);

CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    project_ids TEXT NOT NULL DEFAULT '[]',
    created_by INTEGER NOT NULL REFERENCES users(id),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER NULL
);

-- corr_type_id 0 = the project's default template
CREATE TABLE numbering_templates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    corr_type_id INTEGER NOT NULL DEFAULT 0,
    template TEXT NOT NULL,
    reset_scope TEXT NOT NULL CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE')),
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by INTEGER NULL REFERENCES users(id),
    UNIQUE (project_id, corr_type_id)
);

CREATE TABLE numbering_template_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    template_id INTEGER NOT NULL REFERENCES numbering_templates(id),
    version INTEGER NOT NULL,
    template TEXT NOT NULL,
    reset_scope TEXT NOT NULL,
    previous_template TEXT NULL,
    previous_reset_scope TEXT NULL,
    reason TEXT NOT NULL,
    changed_by INTEGER NULL REFERENCES users(id),
    changed_at INTEGER NOT NULL,
    UNIQUE (template_id, version)
);

CREATE TABLE counters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    corr_type_id INTEGER NOT NULL REFERENCES correspondence_types(id),
    originator_id INTEGER NOT NULL DEFAULT 0,
    recipient_id INTEGER NOT NULL DEFAULT 0,
    sub_type_id INTEGER NOT NULL DEFAULT 0,
    rfa_type_id INTEGER NOT NULL DEFAULT 0,
    discipline_id INTEGER NOT NULL DEFAULT 0,
    period TEXT NOT NULL,
    last_number INTEGER NOT NULL DEFAULT 0 CHECK (last_number >= 0),
    max_number INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (project_id, corr_type_id, originator_id, recipient_id, sub_type_id, rfa_type_id, discipline_id, period)
);

-- Every number ever handed out. A reservation is a row in status RESERVED; nothing is deleted, so a
-- cancelled number keeps its place in the unique constraint and can never be issued again.
CREATE TABLE document_numbers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    counter_id INTEGER NOT NULL REFERENCES counters(id),
    project_id INTEGER NOT NULL,
    corr_type_id INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    revision TEXT NOT NULL DEFAULT 'A',
    number TEXT NOT NULL,
    template TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'VOID')),
    token TEXT NULL UNIQUE,
    document_id TEXT NULL,
    user_id INTEGER NULL,
    api_token_id INTEGER NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NULL,
    confirmed_at INTEGER NULL,
    cancelled_at INTEGER NULL,
    cancel_reason TEXT NULL,
    UNIQUE (project_id, corr_type_id, number),
    UNIQUE (counter_id, sequence, revision)
);
CREATE INDEX idx_document_numbers_expiry ON document_numbers (status, expires_at);
CREATE INDEX idx_document_numbers_document ON document_numbers (document_id);

-- Append-only audit trail, one hash chain per counter (and one per administrative area), so the chain
-- is extended under the counter's own lock and never serializes unrelated counters.
CREATE TABLE audit_chains (
    chain_key TEXT PRIMARY KEY,
    head_hash TEXT NOT NULL,
    length INTEGER NOT NULL
);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chain_key TEXT NOT NULL,
    chain_seq INTEGER NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    operation TEXT NOT NULL,
    status TEXT NOT NULL,
    document_number TEXT NULL,
    counter_id INTEGER NULL,
    sequence INTEGER NULL,
    counter_key TEXT NULL,
    template_used TEXT NULL,
    reservation_token TEXT NULL,
    document_id TEXT NULL,
    user_id INTEGER NULL,
    username TEXT NULL,
    ip_address TEXT NULL,
    user_agent TEXT NULL,
    retry_count INTEGER NOT NULL DEFAULT 0,
    lock_wait_ms INTEGER NOT NULL DEFAULT 0,
    total_ms INTEGER NOT NULL DEFAULT 0,
    fallback_used TEXT NOT NULL DEFAULT 'NONE',
    old_value TEXT NULL,
    new_value TEXT NULL,
    metadata TEXT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (chain_key, chain_seq)
);
CREATE INDEX idx_audit_counter ON audit_log (counter_id, sequence);
CREATE INDEX idx_audit_number ON audit_log (document_number);
CREATE INDEX idx_audit_created ON audit_log (created_at);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER template_versions_no_update BEFORE UPDATE ON numbering_template_versions
BEGIN
    SELECT RAISE(ABORT, 'numbering_template_versions is append-only');
END;

CREATE TRIGGER template_versions_no_delete BEFORE DELETE ON numbering_template_versions
BEGIN
    SELECT RAISE(ABORT, 'numbering_template_versions is append-only');
END;

CREATE TABLE error_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    error_type TEXT NOT NULL,
    code TEXT NULL,
    message TEXT NOT NULL,
    context TEXT NULL,
    ref_id TEXT NULL,
    user_id INTEGER NULL,
    ip_address TEXT NULL,
    created_at INTEGER NOT NULL,
    resolved_at INTEGER NULL
);
CREATE INDEX idx_error_log_type ON error_log (error_type, created_at);
