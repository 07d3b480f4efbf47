-- SAML single sign-on providers of an organization (`saml`): what quire needs to trust an
-- identity provider's assertions, and what to make of the people it signs in.
CREATE TABLE saml_providers (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    -- The identity provider's entity id, its sign-in URL and its signing certificate (PEM);
    -- '' until set: a provider lacking any of them is `pending` and signs nobody in.
    entity_id TEXT NOT NULL,
    sso_url TEXT NOT NULL,
    certificate TEXT NOT NULL,
    -- Where the people it signs in go: a team (NULL: none) and a role (NULL: guest).
    default_team_id TEXT REFERENCES teams (id) ON DELETE SET NULL,
    default_role TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX saml_providers_org ON saml_providers (organization_id, created_at, id);
CREATE INDEX saml_providers_team ON saml_providers (default_team_id);

-- Sign-ins started with a provider and not finished yet: the AuthnRequest's id (which the
-- identity provider's response names in `InResponseTo`) and where the person started. Each
-- row is used once; rows past `expires_at` are removed when the next sign-in starts.
CREATE TABLE saml_requests (
    id TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES saml_providers (id) ON DELETE CASCADE,
    return_to TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX saml_requests_expiry ON saml_requests (expires_at);
CREATE INDEX saml_requests_provider ON saml_requests (provider_id);
