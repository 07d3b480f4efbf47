-- Visitor-auth sites: where a visitor without a valid token is sent to sign in (GitBook's
-- `fallbackURL` of the publishing auth); NULL shows quire's own sign-in page instead.
ALTER TABLE sites ADD COLUMN visitor_fallback_url TEXT;
