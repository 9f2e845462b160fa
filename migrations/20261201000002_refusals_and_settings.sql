-- Refusals the owner must hear about (a plugin's ok:false, a refused check, a send Google
-- refused, a conflict): recorded once each, however many times a sync sees them.
CREATE TABLE refusals (
    id          INTEGER PRIMARY KEY,
    item_id     INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('send_failed', 'check_refused', 'send_refused', 'conflict')),
    reason      TEXT NOT NULL,
    -- What identifies this refusal: the version it happened on, so a new one is a new row.
    dedup_key   TEXT NOT NULL UNIQUE,
    recorded_at TEXT NOT NULL,
    notified_at TEXT
);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
