-- GitBook's draft structure items (not live until made live), hidden site spaces (live, left out
-- of the site's navigation), a site space's own title (the variant's name; the space's title
-- when NULL), and where a visitor-auth site signs its visitors out (`logoutURL`).
ALTER TABLE site_spaces ADD COLUMN title TEXT;
ALTER TABLE site_spaces ADD COLUMN hidden BIGINT NOT NULL DEFAULT 0;
ALTER TABLE site_spaces ADD COLUMN draft BIGINT NOT NULL DEFAULT 0;
ALTER TABLE site_sections ADD COLUMN draft BIGINT NOT NULL DEFAULT 0;
ALTER TABLE site_section_groups ADD COLUMN draft BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN visitor_logout_url TEXT;
