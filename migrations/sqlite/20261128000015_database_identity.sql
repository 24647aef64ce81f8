-- Who this database is (SPEC §7, the witness): a random id made once, kept by backups and restores. The witness of
-- the counters' heads (a file, or Redis shared by the instances) belongs to one database: a new database (a demo
-- started over, another deployment on the same Redis) is not compared with another one's heads.
CREATE TABLE database_identity (id TEXT NOT NULL PRIMARY KEY);
INSERT INTO database_identity (id) VALUES (lower(hex(randomblob(16))));
