-- Webhook signing secrets are stored sealed with SECRETS_KEY (src/server/secrets.rs). SQLite's TEXT column holds the
-- longer sealed form as it is: nothing to change here (MariaDB widens its VARCHAR in the migration of this number).
SELECT 1;
