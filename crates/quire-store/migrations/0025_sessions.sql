-- Assertions an identity provider issued that signed someone in: each is accepted once. Kept
-- until the assertion itself expires (past that it is refused as expired anyway), then removed
-- as later sign-ins finish.
CREATE TABLE saml_assertions (
    provider_id TEXT NOT NULL REFERENCES saml_providers (id) ON DELETE CASCADE,
    assertion_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (provider_id, assertion_id)
);
CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at);

-- Browser sessions opened by a sign-in (the `quire_session` cookie), for the reader site and
-- the session pages. The cookie's secret is never stored, only its SHA-256.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The organization whose provider signed them in, and that provider (NULL once deleted).
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    provider_id TEXT REFERENCES saml_providers (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_org ON sessions (organization_id, created_at, id);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE INDEX sessions_provider ON sessions (provider_id);
