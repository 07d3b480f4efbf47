-- Reviews of change requests and the reviewers requested. A review's comment is a comment of
-- the change request whose target is the review.

CREATE TABLE change_request_reviewers (
    change_request_id TEXT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    -- The change request's revision when the review was requested.
    revision TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (change_request_id, user_id)
);
CREATE INDEX change_request_reviewers_user ON change_request_reviewers (user_id);

CREATE TABLE change_request_reviews (
    id TEXT PRIMARY KEY,
    change_request_id TEXT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    reviewer TEXT NOT NULL,
    requested_by TEXT,
    -- approved or changes-requested
    status TEXT NOT NULL,
    -- The revision reviewed.
    revision TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX change_request_reviews_cr ON change_request_reviews (change_request_id, created_at, id);

ALTER TABLE change_requests ADD COLUMN conversations_issues_cluster TEXT;
CREATE INDEX change_requests_updated ON change_requests (space_id, updated_at, id);
