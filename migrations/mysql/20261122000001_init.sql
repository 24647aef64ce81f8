-- Document numbering schema (MariaDB >= 10.5; built and tested on 10.11). The same tables, columns,
-- constraints and triggers as migrations/sqlite, shaped for the sqlx `Any` driver:
--   * every integer column is BIGINT: the Any driver decodes i64 from BIGINT only (INT/TINYINT fail);
--   * every string column the service reads back is VARCHAR, never TEXT: MariaDB sends TEXT as a BLOB
--     column type and the Any driver then refuses to decode it as a string ("Rust type String is not
--     compatible with SQL type BLOB"). VARCHAR is also what UNIQUE keys need;
--   * strings compare exactly (COLLATE utf8mb4_bin, as SQLite's BINARY): Thai codes and numbers, tokens, keys;
--   * lengths are at least the application's own limits (codes 20, numbers and templates 100, document ids
--     100, REV 3, reasons 500, user agent 300 characters); free text without an application limit (names)
--     gets 500. Strict mode refuses longer values (error 1406) rather than truncating them. A row's VARCHARs
--     must fit MariaDB's 65,535-byte row limit at 4 bytes a character, which bounds audit_log's free text;
--   * error_log's message and context are MEDIUMTEXT: written, never read by the service, and they may
--     quote a whole request. Reading them through the Any driver would need VARCHAR (see above);
--   * timestamps are Unix epoch milliseconds (UTC) in BIGINT, as on SQLite; absent key parts are 0, never NULL.
-- Foreign keys are table-level constraints (column-level REFERENCES is not reliably enforced by MariaDB/MySQL).

CREATE TABLE projects (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    active BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_projects_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE organizations (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    role VARCHAR(32) COLLATE utf8mb4_bin NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_organizations_code (code),
    CONSTRAINT ck_organizations_role CHECK (role IN ('OWNER', 'CONSULTANT', 'CONTRACTOR', 'OTHER'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE project_organizations (
    project_id BIGINT NOT NULL,
    org_id BIGINT NOT NULL,
    PRIMARY KEY (project_id, org_id),
    CONSTRAINT fk_project_organizations_project FOREIGN KEY (project_id) REFERENCES projects (id),
    CONSTRAINT fk_project_organizations_org FOREIGN KEY (org_id) REFERENCES organizations (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE correspondence_types (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_correspondence_types_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE sub_types (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    corr_type_id BIGINT NOT NULL,
    sub_type_number VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    UNIQUE KEY uq_sub_types_number (corr_type_id, sub_type_number),
    UNIQUE KEY uq_sub_types_code (corr_type_id, code),
    CONSTRAINT fk_sub_types_corr_type FOREIGN KEY (corr_type_id) REFERENCES correspondence_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE rfa_types (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    UNIQUE KEY uq_rfa_types_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE disciplines (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    UNIQUE KEY uq_disciplines_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE users (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    username VARCHAR(100) COLLATE utf8mb4_bin NOT NULL,
    display_name VARCHAR(500) NOT NULL,
    password_hash VARCHAR(255) NOT NULL,
    role VARCHAR(32) COLLATE utf8mb4_bin NOT NULL,
    active BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_users_username (username),
    CONSTRAINT ck_users_role CHECK (role IN ('STAFF', 'PROJECT_ADMIN', 'SUPER_ADMIN'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE project_admins (
    user_id BIGINT NOT NULL,
    project_id BIGINT NOT NULL,
    PRIMARY KEY (user_id, project_id),
    CONSTRAINT fk_project_admins_user FOREIGN KEY (user_id) REFERENCES users (id),
    CONSTRAINT fk_project_admins_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE api_tokens (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    token_hash VARCHAR(128) COLLATE utf8mb4_bin NOT NULL,
    prefix VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    project_ids VARCHAR(8000) NOT NULL DEFAULT '[]',
    created_by BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL,
    UNIQUE KEY uq_api_tokens_hash (token_hash),
    CONSTRAINT fk_api_tokens_created_by FOREIGN KEY (created_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- corr_type_id 0 = the project's default template
CREATE TABLE numbering_templates (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    project_id BIGINT NOT NULL,
    corr_type_id BIGINT NOT NULL DEFAULT 0,
    template VARCHAR(1000) NOT NULL,
    reset_scope VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    version BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    updated_by BIGINT NULL,
    UNIQUE KEY uq_numbering_templates_scope (project_id, corr_type_id),
    CONSTRAINT ck_numbering_templates_reset CHECK (reset_scope IN ('YEARLY', 'MONTHLY', 'NONE')),
    CONSTRAINT fk_numbering_templates_project FOREIGN KEY (project_id) REFERENCES projects (id),
    CONSTRAINT fk_numbering_templates_user FOREIGN KEY (updated_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE numbering_template_versions (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    template_id BIGINT NOT NULL,
    version BIGINT NOT NULL,
    template VARCHAR(1000) NOT NULL,
    reset_scope VARCHAR(16) COLLATE utf8mb4_bin NOT NULL,
    previous_template VARCHAR(1000) NULL,
    previous_reset_scope VARCHAR(16) COLLATE utf8mb4_bin NULL,
    reason VARCHAR(2000) NOT NULL,
    changed_by BIGINT NULL,
    changed_at BIGINT NOT NULL,
    UNIQUE KEY uq_numbering_template_versions (template_id, version),
    CONSTRAINT fk_template_versions_template FOREIGN KEY (template_id) REFERENCES numbering_templates (id),
    CONSTRAINT fk_template_versions_user FOREIGN KEY (changed_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE counters (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    project_id BIGINT NOT NULL,
    corr_type_id BIGINT NOT NULL,
    originator_id BIGINT NOT NULL DEFAULT 0,
    recipient_id BIGINT NOT NULL DEFAULT 0,
    sub_type_id BIGINT NOT NULL DEFAULT 0,
    rfa_type_id BIGINT NOT NULL DEFAULT 0,
    discipline_id BIGINT NOT NULL DEFAULT 0,
    period VARCHAR(32) COLLATE utf8mb4_bin NOT NULL,
    last_number BIGINT NOT NULL DEFAULT 0,
    max_number BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_counters_key (project_id, corr_type_id, originator_id, recipient_id, sub_type_id, rfa_type_id, discipline_id, period),
    CONSTRAINT ck_counters_last_number CHECK (last_number >= 0),
    CONSTRAINT fk_counters_project FOREIGN KEY (project_id) REFERENCES projects (id),
    CONSTRAINT fk_counters_corr_type FOREIGN KEY (corr_type_id) REFERENCES correspondence_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every number ever handed out. A reservation is a row in status RESERVED; nothing is deleted, so a
-- cancelled number keeps its place in the unique constraint and can never be issued again.
CREATE TABLE document_numbers (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    counter_id BIGINT NOT NULL,
    project_id BIGINT NOT NULL,
    corr_type_id BIGINT NOT NULL,
    sequence BIGINT NOT NULL,
    revision VARCHAR(16) COLLATE utf8mb4_bin NOT NULL DEFAULT 'A',
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
    UNIQUE KEY uq_document_numbers_token (token),
    UNIQUE KEY uq_document_numbers_number (project_id, corr_type_id, number),
    UNIQUE KEY uq_document_numbers_sequence (counter_id, sequence, revision),
    KEY idx_document_numbers_expiry (status, expires_at),
    KEY idx_document_numbers_document (document_id),
    CONSTRAINT ck_document_numbers_status CHECK (status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'VOID')),
    CONSTRAINT fk_document_numbers_counter FOREIGN KEY (counter_id) REFERENCES counters (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Append-only audit trail, one hash chain per counter (and one per administrative area), so the chain
-- is extended under the counter's own lock and never serializes unrelated counters.
CREATE TABLE audit_chains (
    chain_key VARCHAR(64) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    head_hash VARCHAR(128) COLLATE utf8mb4_bin NOT NULL,
    length BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE audit_log (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    chain_key VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    chain_seq BIGINT NOT NULL,
    prev_hash VARCHAR(128) COLLATE utf8mb4_bin NOT NULL,
    hash VARCHAR(128) COLLATE utf8mb4_bin NOT NULL,
    operation VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    status VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    document_number VARCHAR(255) COLLATE utf8mb4_bin NULL,
    counter_id BIGINT NULL,
    sequence BIGINT NULL,
    counter_key VARCHAR(1000) NULL,
    template_used VARCHAR(1000) NULL,
    reservation_token VARCHAR(64) COLLATE utf8mb4_bin NULL,
    document_id VARCHAR(255) COLLATE utf8mb4_bin NULL,
    user_id BIGINT NULL,
    username VARCHAR(500) NULL,
    ip_address VARCHAR(64) NULL,
    user_agent VARCHAR(400) NULL,
    retry_count BIGINT NOT NULL DEFAULT 0,
    lock_wait_ms BIGINT NOT NULL DEFAULT 0,
    total_ms BIGINT NOT NULL DEFAULT 0,
    fallback_used VARCHAR(16) COLLATE utf8mb4_bin NOT NULL DEFAULT 'NONE',
    old_value VARCHAR(4000) NULL,
    new_value VARCHAR(4000) NULL,
    metadata VARCHAR(4000) NULL,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_audit_log_chain (chain_key, chain_seq),
    KEY idx_audit_counter (counter_id, sequence),
    KEY idx_audit_number (document_number),
    KEY idx_audit_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only';

CREATE TRIGGER template_versions_no_update BEFORE UPDATE ON numbering_template_versions
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'numbering_template_versions is append-only';

CREATE TRIGGER template_versions_no_delete BEFORE DELETE ON numbering_template_versions
FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'numbering_template_versions is append-only';

CREATE TABLE error_log (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    error_type VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    code VARCHAR(64) COLLATE utf8mb4_bin NULL,
    message MEDIUMTEXT NOT NULL,
    context MEDIUMTEXT NULL,
    ref_id VARCHAR(64) COLLATE utf8mb4_bin NULL,
    user_id BIGINT NULL,
    ip_address VARCHAR(64) NULL,
    created_at BIGINT NOT NULL,
    resolved_at BIGINT NULL,
    KEY idx_error_log_type (error_type, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
