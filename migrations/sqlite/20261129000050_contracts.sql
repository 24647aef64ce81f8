-- A project's contracts (LCBP3: C1, C2, …): reference data under the project. `{CONTRACT}` shows the code, and a
-- template that resets per contract keeps one counter per contract (period `CONTRACT_<id>`). The code is the
-- contract's identity within its project; nothing is deleted, an ended contract is made inactive.
CREATE TABLE contracts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at INTEGER NOT NULL,
    UNIQUE (project_id, code)
);
