-- One meaning of "shown": every time a version of a draft is displayed to an actor (the
-- desktop's mail frame of that version loaded, the CLI's `show` printed it), a row here. An
-- approval binds only to a version its actor was shown, and its audit row names the view.
CREATE TABLE view_events (
    id        INTEGER PRIMARY KEY,
    item_id   INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    version   TEXT NOT NULL,
    digest    TEXT NOT NULL,
    actor     TEXT NOT NULL,
    -- Which rendering was displayed: 'html' (the mail frame, or the HTML's visible text) or
    -- 'text' (the plain-text alternative).
    part      TEXT NOT NULL CHECK (part IN ('html', 'text')),
    viewed_at TEXT NOT NULL
);
CREATE INDEX view_events_item_actor ON view_events (item_id, actor, id);

-- The view an audited decision was taken on.
ALTER TABLE audit_log ADD COLUMN view_id INTEGER REFERENCES view_events (id) ON DELETE SET NULL;
