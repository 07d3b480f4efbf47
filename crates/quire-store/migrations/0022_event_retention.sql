-- Retention of events (`integrations::retention`): the outbox rows already fanned out, and the
-- integration events already settled, are removed oldest first once older than the retention.
CREATE INDEX events_dispatched_by_creation ON events (created_at) WHERE dispatched_at IS NOT NULL;
CREATE INDEX integration_events_by_completion ON integration_events (completed_at) WHERE completed_at IS NOT NULL;
