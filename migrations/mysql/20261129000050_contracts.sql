-- A project's contracts (LCBP3: C1, C2, …): reference data under the project. `{CONTRACT}` shows the code, and a
-- template that resets per contract keeps one counter per contract (period `CONTRACT_<id>`). The code is the
-- contract's identity within its project; nothing is deleted, an ended contract is made inactive.
CREATE TABLE contracts (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    project_id BIGINT NOT NULL,
    code VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(500) NOT NULL,
    active BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_contracts_project_code (project_id, code),
    CONSTRAINT ck_contracts_active CHECK (active IN (0, 1)),
    CONSTRAINT fk_contracts_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
