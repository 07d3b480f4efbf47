-- Comments and replies on spaces and change requests, and emoji reactions to both.

CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    -- NULL for comments on the space itself.
    change_request_id TEXT REFERENCES change_requests (id) ON DELETE CASCADE,
    review_id TEXT,
    page_id TEXT,
    node_id TEXT,
    table_record TEXT,
    table_definition TEXT,
    -- The revision in which the target is found.
    revision_id TEXT NOT NULL,
    posted_by TEXT NOT NULL,
    posted_at BIGINT NOT NULL,
    edited_at BIGINT,
    -- The body, a JSON document.
    body TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    resolved_at BIGINT,
    resolved_by TEXT
);
CREATE INDEX comments_space ON comments (space_id, change_request_id, posted_at, id);
CREATE INDEX comments_page ON comments (space_id, page_id, posted_at, id);
CREATE INDEX comments_cr ON comments (change_request_id, posted_at, id);

CREATE TABLE comment_replies (
    id TEXT PRIMARY KEY,
    comment_id TEXT NOT NULL REFERENCES comments (id) ON DELETE CASCADE,
    posted_by TEXT NOT NULL,
    posted_at BIGINT NOT NULL,
    edited_at BIGINT,
    body TEXT NOT NULL
);
CREATE INDEX comment_replies_comment ON comment_replies (comment_id, posted_at, id);

-- One row per user and emoji on a comment or a reply: each user reacts at most once per emoji.
CREATE TABLE comment_reactions (
    target_id TEXT NOT NULL,
    emoji TEXT NOT NULL,
    user_id TEXT NOT NULL,
    reacted_at BIGINT NOT NULL,
    PRIMARY KEY (target_id, emoji, user_id)
);
