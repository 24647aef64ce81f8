-- Webhook signing secrets are stored sealed with SECRETS_KEY (src/server/secrets.rs): "enc:v1:" and the base64 of
-- nonce, ciphertext and tag. A 200-character secret seals to 311 characters; plain secrets stored before stay
-- readable and are sealed when an instance starts with the key.
ALTER TABLE notification_webhooks MODIFY secret VARCHAR(400) COLLATE utf8mb4_bin NOT NULL;
